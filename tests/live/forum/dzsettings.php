<?php
/*
 * Read or change Discuz! X settings from a shell and rebuild the caches, as the admin panel's
 * "save" does. Run as the web server's user so the cache files stay writable for php-fpm:
 *
 *   runuser -u www-data -- php dzsettings.php DOCROOT set floodctrl=0 seccodestatus=0
 *   runuser -u www-data -- php dzsettings.php DOCROOT show floodctrl
 *   runuser -u www-data -- php dzsettings.php DOCROOT usergroup 10 allowhidecode=1
 *   runuser -u www-data -- php dzsettings.php DOCROOT recache
 */
if ($argc < 3) {
	fwrite(STDERR, "usage: php dzsettings.php DOCROOT set k=v... | show k... | usergroup GID k=v... | recache\n");
	exit(2);
}
chdir($argv[1]);
foreach (array('HTTP_HOST' => '127.0.0.1', 'REQUEST_URI' => '/cli', 'SCRIPT_NAME' => '/cli', 'PHP_SELF' => '/cli',
		'REMOTE_ADDR' => '127.0.0.1', 'REQUEST_METHOD' => 'GET', 'HTTP_USER_AGENT' => 'cli') as $k => $v) {
	$_SERVER[$k] = $v;
}
$_SERVER['SCRIPT_FILENAME'] = $argv[1] . '/cli';
define('APPTYPEID', 0);
define('CURSCRIPT', 'cli');
error_reporting(E_ERROR | E_PARSE);
require './source/class/class_core.php';
$app = C::app();
$app->init_cron = false;
$app->init_session = false;
$app->init_mobile = false;
$app->init();
require_once libfile('function/cache');
// the core's init clears every plain global, so the arguments are read again from $_SERVER
$words = array_slice($_SERVER['argv'], 2);
$verb = array_shift($words);

function pairs_of($words) {
	$pairs = array();
	foreach ($words as $w) {
		list($k, $v) = array_pad(explode('=', $w, 2), 2, null);
		if ($v === null) {
			fwrite(STDERR, "expected key=value, got $w\n");
			exit(2);
		}
		$pairs[$k] = $v;
	}
	return $pairs;
}

switch ($verb) {
	case 'set':
		$pairs = pairs_of($words);
		C::t('common_setting')->update_batch($pairs);
		updatecache('setting');
		foreach (array_keys($pairs) as $k) echo $k, '=', C::t('common_setting')->fetch($k), "\n";
		break;
	case 'show':
		foreach ($words as $k) echo $k, '=', C::t('common_setting')->fetch($k), "\n";
		break;
	case 'usergroup':
		$gid = intval(array_shift($words));
		$pairs = pairs_of($words);
		$columns = array_keys(C::t('common_usergroup')->fetch($gid));
		$own = array_intersect_key($pairs, array_flip($columns));
		$extra = array_diff_key($pairs, $own);
		if ($own) C::t('common_usergroup')->update($gid, $own);
		if ($extra) C::t('common_usergroup_field')->update($gid, $extra);
		updatecache(array('usergroups', 'setting'));
		echo "usergroup $gid: ", json_encode($pairs), "\n";
		break;
	case 'recache':
		updatecache();
		echo "caches rebuilt\n";
		break;
	default:
		fwrite(STDERR, "unknown verb: $verb\n");
		exit(2);
}
