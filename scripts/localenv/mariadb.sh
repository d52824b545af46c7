# MariaDB from Debian's package, run as a private mariadbd on loopback with its data, socket and pid
# file under $STATE/mariadb. The package's own system instance is never started: the install runs
# under a policy-rc.d that denies every service start (one already in place is left as it is).
# The server offers TLS (a private CA, a certificate for 127.0.0.1 and a client certificate under
# $STATE/mariadb/tls-v1) and requires it of no one: plain connections work as before.

MARIADB_PORT=${LOCALENV_MARIADB_PORT:-23306}
MARIADB_ADMIN_USERNAME=vhost-broker-admin

ensure_mariadb_installed() {
  [[ -x /usr/sbin/mariadbd && -x /usr/bin/mariadb-install-db && -x /usr/bin/mariadb ]] && return 0
  log "installing mariadb-server from Debian"
  mkdir -p "$STATE/logs"
  local policy=/usr/sbin/policy-rc.d ours=0
  if [[ ! -e $policy ]]; then
    printf '#!/bin/sh\n# Written by vhost-broker localenv for the length of one apt-get install.\nexit 101\n' >"$policy"
    chmod +x "$policy"
    ours=1
  fi
  local status=0
  # Another apt-get on the machine holds the lock for a while at most: wait for it rather than fail.
  local wait=(-o DPkg::Lock::Timeout=300)
  { apt-get "${wait[@]}" update -qq &&
    DEBIAN_FRONTEND=noninteractive apt-get "${wait[@]}" install -y -qq mariadb-server mariadb-client; } \
    >"$STATE/logs/mariadb-install.log" 2>&1 || status=$?
  ((ours)) && rm -f "$policy"
  ((status == 0)) || die_with_log "$STATE/logs/mariadb-install.log" "mariadb: apt-get install mariadb-server failed"
}

mariadb_dir() { echo "$STATE/mariadb"; }

# The client as the administrator, with the login in a defaults file rather than on the command line.
mariadb_admin() { mariadb --defaults-file="$(mariadb_dir)/admin.cnf" "$@"; }

# As root over the socket (unix_socket authentication: the OS user is root), for the first start.
mariadb_root() { mariadb --no-defaults --socket="$(mariadb_dir)/mariadb.sock" -uroot "$@"; }

# The CA, server and client certificates, made once: a restart, or `down` (which keeps them), reuses
# them. The folder's name carries the layout's version, so a later change makes a new set beside it.
mariadb_tls_dir() { echo "$(mariadb_dir)/tls-v1"; }

ensure_mariadb_tls() {
  local tls tmp
  tls=$(mariadb_tls_dir)
  [[ -s $tls/ca.crt && -s $tls/server.crt && -s $tls/client.crt ]] && return 0
  # Made in a folder of its own and moved in whole, so an interrupted run leaves no half set.
  tmp=$(mktemp -d "$(mariadb_dir)/tls.XXXXXX")
  (
    cd "$tmp"
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -keyout ca.key -out ca.crt \
      -subj "/CN=vhost-broker localenv MariaDB CA" \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
    leaf() { # NAME CN EXTENSIONS
      openssl req -new -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.csr" -subj "/CN=$2"
      printf 'basicConstraints=CA:FALSE\n%s\n' "$3" >"$1.ext"
      openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -set_serial "0x$(openssl rand -hex 16)" \
        -days 3650 -extfile "$1.ext" -out "$1.crt"
      rm -f "$1.csr" "$1.ext"
    }
    leaf server 127.0.0.1 $'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth'
    leaf client vhost-broker-localenv-client "extendedKeyUsage=clientAuth"
    chmod 600 ./*.key
  ) >"$STATE/logs/mariadb-tls.log" 2>&1 || {
    rm -rf "$tmp"
    die_with_log "$STATE/logs/mariadb-tls.log" "mariadb: making the TLS certificates with openssl failed"
  }
  rm -rf "$tls"
  mv "$tmp" "$tls"
}

mariadb_answers() { mariadb_admin -N -e 'SELECT 1' || mariadb_root -N -e 'SELECT 1'; }

mariadb_up() {
  ensure_mariadb_installed
  local dir
  dir=$(mariadb_dir)
  mkdir -p "$dir" "$STATE/logs"
  [[ -f $dir/admin-password ]] || head -c 24 /dev/urandom | base64 | tr -d '/+=' >"$dir/admin-password"
  cat >"$dir/admin.cnf" <<CNF
[client]
host=127.0.0.1
port=$MARIADB_PORT
user=$MARIADB_ADMIN_USERNAME
password=$(cat "$dir/admin-password")
CNF
  chmod 600 "$dir/admin.cnf" "$dir/admin-password"
  if [[ ! -d $dir/data/mysql ]]; then
    rm -rf "$dir/data"
    mariadb-install-db --no-defaults --user="$(id -un)" --datadir="$dir/data" --skip-test-db \
      --auth-root-authentication-method=socket >"$STATE/logs/mariadb-install-db.log" 2>&1 ||
      die_with_log "$STATE/logs/mariadb-install-db.log" "mariadb: mariadb-install-db failed"
  fi
  ensure_mariadb_tls
  local tls
  tls=$(mariadb_tls_dir)
  running mariadb || start mariadb -C "$dir" "$MARIADB_PORT" -- /usr/sbin/mariadbd --no-defaults \
    --user="$(id -un)" --datadir="$dir/data" --socket="$dir/mariadb.sock" --pid-file="$dir/mariadb.pid" \
    --bind-address=127.0.0.1 --port="$MARIADB_PORT" --skip-name-resolve \
    --character-set-server=utf8mb4 --collation-server=utf8mb4_general_ci \
    --ssl-ca="$tls/ca.crt" --ssl-cert="$tls/server.crt" --ssl-key="$tls/server.key"
  wait_until mariadb 60 mariadb_answers
  mariadb_admin -N -e 'SELECT 1' >/dev/null 2>&1 && return 0
  # The operator's administrator (not root), created over the socket on the server's first start.
  mariadb_root -e "CREATE USER IF NOT EXISTS '$MARIADB_ADMIN_USERNAME'@'%' IDENTIFIED BY '$(cat "$dir/admin-password")';
    GRANT ALL PRIVILEGES ON *.* TO '$MARIADB_ADMIN_USERNAME'@'%' WITH GRANT OPTION;" 2>>"$STATE/logs/mariadb.log" ||
    die_with_log "$STATE/logs/mariadb.log" "mariadb: could not create the administrator $MARIADB_ADMIN_USERNAME"
  mariadb_admin -N -e 'SELECT 1' >/dev/null || die_with_log "$STATE/logs/mariadb.log" "mariadb: the administrator cannot log in"
}

mariadb_version() { mariadb_admin -N -e 'SELECT VERSION()' 2>/dev/null; }

mariadb_down() { stop mariadb; }
