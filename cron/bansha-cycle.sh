#!/usr/bin/env bash
# What a crontab line calls: one `bansha cycle` for one game, never two at once.
#
#   bansha-cycle.sh /path/to/game.toml
#   BANSHA_ONLY_ON=2026-12-02 bansha-cycle.sh /path/to/game.toml    (a one-off line)
#
# - A one-off line (a day's close, a vote reminder; `bansha schedule` writes them) names its
#   date in BANSHA_ONLY_ON (YYYY-MM-DD, the machine's own date): a crontab line has no year, so
#   it matches the same day next year too; on any other date this exits 0 at once, silently.
# - Loads secrets (BANSHA_COOKIE, BANSHA_USERNAME/BANSHA_PASSWORD …) from an env file that must
#   be private (mode 600): $BANSHA_ENV_FILE, default ~/.config/bansha/env.
# - Appends everything bansha prints to a log beside the game file (<game>.log), created private
#   (umask 077: mode 600, like the store; the log names players, drafts and errors).
# - Never overlaps: flock on <game>.cron.lock where flock(1) exists (Linux; macOS has none),
#   and bansha's own lock refuses a second cycle everywhere.
# - Uses the virtual environment of this repository (.venv), unless $BANSHA_BIN says otherwise
#   (`bansha schedule` of an installed bansha writes BANSHA_BIN into each line).
# - Exits with bansha's exit code (0 when the previous cycle is still running and this one is
#   skipped), so cron's mail and monitoring see a failed cycle.
set -u
umask 077
game=${1:?usage: bansha-cycle.sh GAME.toml}
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${BANSHA_BIN:-$here/.venv/bin/bansha}
env_file=${BANSHA_ENV_FILE:-$HOME/.config/bansha/env}
log="${game%.toml}.log"
only_on=${BANSHA_ONLY_ON:-}
# a log an older wrapper created world-readable is made private too
[ -e "$log" ] && chmod go-rwx "$log" 2>/dev/null

if [ -n "$only_on" ]; then
  case $only_on in
    [0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]) ;;
    *)
      echo "$(date +%Y-%m-%dT%H:%M:%S%z) BANSHA_ONLY_ON=$only_on 不是日期（应为 年-月-日，如 2026-12-02），本轮没有运行；请用 bansha schedule 重新生成 crontab 行" >>"$log"
      exit 1
      ;;
  esac
  # another day (the same day of another year): not this line's moment
  [ "$(date +%F)" = "$only_on" ] || exit 0
fi

if [ -f "$env_file" ]; then
  # GNU stat (Linux), else BSD stat (macOS)
  mode=$(stat -c %a "$env_file" 2>/dev/null || stat -f %Lp "$env_file")
  if [ "$mode" != "600" ] && [ "$mode" != "400" ]; then
    echo "$(date +%Y-%m-%dT%H:%M:%S%z) 拒绝读取 $env_file：权限是 $mode，应为 600（chmod 600 $env_file）" >>"$log"
    exit 1
  fi
  set -a
  # shellcheck disable=SC1090
  . "$env_file"
  set +a
fi

if command -v flock >/dev/null 2>&1; then
  exec 9>"${game%.toml}.cron.lock"
  if ! flock -n 9; then
    echo "$(date +%Y-%m-%dT%H:%M:%S%z) 上一轮仍在运行，跳过" >>"$log"
    exit 0
  fi
fi
rc=0
{
  echo "$(date +%Y-%m-%dT%H:%M:%S%z) cycle $game"
  "$bin" cycle "$game"
  rc=$?
  [ $rc -eq 0 ] || echo "$(date +%Y-%m-%dT%H:%M:%S%z) 退出码 $rc"
} >>"$log" 2>&1
exit "$rc"
