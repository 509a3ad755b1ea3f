#!/usr/bin/env bash
# A throw-away Discuz! X3.5 on 127.0.0.1 for the live tests and for capturing page samples.
# MariaDB, php-fpm and nginx are started by hand (no systemd) and bound to loopback only;
# source, database, configuration, logs and pid files all live under the work folder.
#
#   dzforum.sh up WORK       start (first time: unpack the source, create the database, install)
#   dzforum.sh down WORK     stop the three daemons started for WORK
#   dzforum.sh status WORK   which daemons run, and the forum's address
#
# Environment:
#   DZ_SOURCE   the Discuz! X git directory (bare clone is fine) or a folder holding upload/;
#               read only on the first `up` for a work folder
#   DZ_REF      the git ref to unpack (default v3.5-20231221, the newest X3.5 release tag)
#   DZ_HTTP_PORT / DZ_FPM_PORT / DZ_DB_PORT   ports; unset ones are chosen free on the first `up`
#               and kept in WORK/ports.env
#   DZ_FOUNDER / DZ_FOUNDER_PW   the founder account (default admin / admin123456)
#   DZ_NO_APT=1 never install Debian packages
set -euo pipefail

cmd=${1:-}
WORK=${2:-${DZ_WORK:-}}
if [ -z "$cmd" ] || [ -z "$WORK" ]; then
  echo "用法：$0 up|down|status WORK" >&2
  exit 2
fi
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PY=${DZ_PYTHON:-python3}
DOCROOT=$WORK/htdocs
PIDS=$WORK/pids
LOGDIR=$WORK/log
CONF=$WORK/conf
DBDIR=$WORK/db

running() { [ -s "$PIDS/$1.pid" ] && kill -0 "$(cat "$PIDS/$1.pid")" 2>/dev/null; }
started=$(date +%s)
note() { echo "[+$(( $(date +%s) - started ))s] $*"; }

free_port() {
  "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

load_ports() {
  if [ -f "$WORK/ports.env" ]; then . "$WORK/ports.env"; fi
  HTTP_PORT=${DZ_HTTP_PORT:-${HTTP_PORT:-$(free_port)}}
  FPM_PORT=${DZ_FPM_PORT:-${FPM_PORT:-$(free_port)}}
  DB_PORT=${DZ_DB_PORT:-${DB_PORT:-$(free_port)}}
  printf 'HTTP_PORT=%s\nFPM_PORT=%s\nDB_PORT=%s\n' "$HTTP_PORT" "$FPM_PORT" "$DB_PORT" >"$WORK/ports.env"
  BASE="http://127.0.0.1:$HTTP_PORT/"
}

do_down() {
  local name
  for name in nginx fpm; do
    if running "$name"; then kill "$(cat "$PIDS/$name.pid")"; echo "$name 已停止"; fi
  done
  if running mariadb; then
    kill "$(cat "$PIDS/mariadb.pid")"
    for _ in $(seq 120); do running mariadb || break; sleep 0.5; done
    echo "mariadb 已停止"
  fi
}

do_status() {
  local name
  for name in mariadb fpm nginx; do
    if running "$name"; then echo "$name: 运行中 (pid $(cat "$PIDS/$name.pid"))"; else echo "$name: 未运行"; fi
  done
  if [ -f "$WORK/base_url" ]; then echo "论坛: $(cat "$WORK/base_url")"; fi
}

need_packages() {
  [ -n "${DZ_NO_APT:-}" ] && return 1
  command -v nginx >/dev/null && command -v mariadbd >/dev/null && ls /usr/sbin/php-fpm* >/dev/null 2>&1 || return 0
  local mods
  mods=$(php -m 2>/dev/null || true)
  for m in mysqli mbstring xml; do grep -qx "$m" <<<"$mods" || return 0; done
  return 1
}

do_up() {
  load_ports
  mkdir -p "$PIDS" "$LOGDIR" "$CONF" "$WORK/tmp"
  if need_packages; then
    note "安装 Debian 软件包（nginx、php-fpm、mariadb）"
    DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q nginx php-fpm php-cli php-mysql php-xml \
      php-mbstring php-gd php-curl mariadb-server >/dev/null
  fi
  local fpm
  fpm=$(ls /usr/sbin/php-fpm* | head -n1)

  # --- the source: unpacked once per work folder
  if [ ! -f "$DOCROOT/forum.php" ]; then
    local src=${DZ_SOURCE:-}
    [ -n "$src" ] || { echo "第一次启动需要 DZ_SOURCE（Discuz! X 的 git 目录或含 upload/ 的目录）" >&2; exit 1; }
    rm -rf "$WORK/unpack"; mkdir -p "$WORK/unpack"
    if [ -d "$src/upload" ]; then
      cp -a "$src/upload" "$WORK/unpack/"
    else
      local ref=${DZ_REF:-v3.5-20231221}
      note "解出 $ref:upload"
      git --git-dir="$src" archive "$ref" upload | tar -x -C "$WORK/unpack"
      git --git-dir="$src" rev-parse "$ref^{commit}" >"$WORK/source_commit"
    fi
    rm -rf "$DOCROOT"; mv "$WORK/unpack/upload" "$DOCROOT"; rmdir "$WORK/unpack"
    chown -R www-data:www-data "$DOCROOT"
  fi

  # --- MariaDB
  if [ ! -d "$DBDIR/mysql" ]; then
    note "初始化 MariaDB 数据目录"
    mkdir -p "$DBDIR"; chown mysql:mysql "$DBDIR"
    mariadb-install-db --no-defaults --user=mysql --datadir="$DBDIR" --skip-test-db >"$LOGDIR/db-init.log" 2>&1
  fi
  chown mysql:mysql "$PIDS"; chmod 755 "$PIDS"
  if ! running mariadb; then
    note "启动 MariaDB 127.0.0.1:$DB_PORT"
    mariadbd --no-defaults --user=mysql --datadir="$DBDIR" --bind-address=127.0.0.1 --port="$DB_PORT" \
      --socket="$PIDS/db.sock" --pid-file="$PIDS/mariadb.pid" --log-error="$LOGDIR/mariadb.err" \
      --skip-name-resolve --character-set-server=utf8mb4 >/dev/null 2>&1 &
    for _ in $(seq 120); do [ -S "$PIDS/db.sock" ] && running mariadb && break; sleep 0.5; done
    running mariadb || { echo "MariaDB 没有起来，见 $LOGDIR/mariadb.err" >&2; exit 1; }
  fi
  mariadb --no-defaults --socket="$PIDS/db.sock" -uroot -e "
    CREATE DATABASE IF NOT EXISTS dz DEFAULT CHARACTER SET utf8mb4;
    CREATE USER IF NOT EXISTS 'dz'@'127.0.0.1' IDENTIFIED BY 'dzpass';
    GRANT ALL PRIVILEGES ON dz.* TO 'dz'@'127.0.0.1'; FLUSH PRIVILEGES;"

  # --- php-fpm
  cat >"$CONF/fpm.conf" <<CONF
[global]
pid = $PIDS/fpm.pid
error_log = $LOGDIR/fpm.log
daemonize = yes
[dz]
user = www-data
group = www-data
listen = 127.0.0.1:$FPM_PORT
pm = static
pm.max_children = 4
clear_env = no
catch_workers_output = yes
php_admin_value[error_log] = $LOGDIR/php.log
php_admin_value[date.timezone] = Asia/Shanghai
CONF
  if ! running fpm; then
    note "启动 php-fpm 127.0.0.1:$FPM_PORT"
    touch "$LOGDIR/php.log"; chown www-data "$LOGDIR/php.log"
    "$fpm" --fpm-config "$CONF/fpm.conf"
  fi

  # --- nginx
  mkdir -p "$WORK/tmp/nginx"
  cat >"$CONF/nginx.conf" <<CONF
user www-data;
worker_processes 1;
pid $PIDS/nginx.pid;
error_log $LOGDIR/nginx.err;
events { worker_connections 128; }
http {
  include /etc/nginx/mime.types;
  access_log $LOGDIR/access.log;
  client_body_temp_path $WORK/tmp/nginx/body;
  fastcgi_temp_path $WORK/tmp/nginx/fcgi;
  proxy_temp_path $WORK/tmp/nginx/proxy;
  uwsgi_temp_path $WORK/tmp/nginx/uwsgi;
  scgi_temp_path $WORK/tmp/nginx/scgi;
  client_max_body_size 8m;
  gzip off;
  server {
    listen 127.0.0.1:$HTTP_PORT;
    root $DOCROOT;
    index index.php;
    location ~ ^/(data|config|uc_server/data|uc_client/data)/.*\.php\$ { return 403; }
    location ~ \.php\$ {
      include /etc/nginx/fastcgi_params;
      fastcgi_param SCRIPT_FILENAME \$document_root\$fastcgi_script_name;
      # Discuz builds its own links (siteurl, UC_API, quote links) from HTTP_HOST: keep the port
      fastcgi_param HTTP_HOST \$host:\$server_port;
      fastcgi_pass 127.0.0.1:$FPM_PORT;
      fastcgi_read_timeout 300;
    }
  }
}
CONF
  if running nginx; then nginx -c "$CONF/nginx.conf" -s reload; else
    note "启动 nginx $BASE"; nginx -c "$CONF/nginx.conf"; fi
  for _ in $(seq 60); do "$PY" -c "import urllib.request,sys; urllib.request.urlopen('$BASE', timeout=2)" 2>/dev/null && break; sleep 0.25; done

  # --- the web installer, then settings that let a script post at speed
  local founder=${DZ_FOUNDER:-admin} founder_pw=${DZ_FOUNDER_PW:-admin123456}
  if [ ! -f "$DOCROOT/data/install.lock" ]; then
    note "通过 HTTP 运行 Discuz 安装程序"
    "$PY" "$HERE/dzdriver.py" --base "$BASE" install --db "127.0.0.1:$DB_PORT" --db-user dz --db-pass dzpass \
      --db-name dz --founder "$founder" --founder-pw "$founder_pw"
  fi
  sed -i "s#define('UC_API', '[^']*')#define('UC_API', '${BASE}uc_server')#" "$DOCROOT/config/config_ucenter.php"
  if [ ! -f "$WORK/settings.done" ]; then
    note "关闭验证码与灌水限制（脚本发帖用）"
    runuser -u www-data -- php "$HERE/dzsettings.php" "$DOCROOT" set seccodestatus=0 floodctrl=0 \
      minpostsize=1 newbiespan=0 regctrl=0 regfloodctrl=0 >/dev/null
    touch "$WORK/settings.done"
  fi
  printf '%s\n' "$BASE" >"$WORK/base_url"
  note "论坛已就绪：$BASE（站长 $founder）"
}

case "$cmd" in
  up) do_up ;;
  down) do_down ;;
  status) do_status ;;
  *) echo "未知命令：$cmd（up|down|status）" >&2; exit 2 ;;
esac
