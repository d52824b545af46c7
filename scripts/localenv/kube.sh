# The two Kubernetes clusters: one etcd (a key prefix per cluster), and per cluster a kube-apiserver
# with TLS and RBAC plus a kube-controller-manager running the garbage-collector, namespace and
# service-account-token controllers.

# Newest first; the first one that builds with the machine's Go is used.
K8S_CANDIDATES=${LOCALENV_K8S_VERSIONS:-"v1.37.2 v1.36.3 v1.35.4 v1.34.6"}
ETCD_VERSION=${LOCALENV_ETCD_VERSION:-v3.6.16}
# Helm renders and installs deploy/target-cluster-access in the chart and multicluster tests.
HELM_VERSION=${LOCALENV_HELM_VERSION:-v3.22.0}

ETCD_PORT=${LOCALENV_ETCD_PORT:-23790}
ETCD_PEER_PORT=${LOCALENV_ETCD_PEER_PORT:-23791}
declare -A API_PORT=([management]=${LOCALENV_MANAGEMENT_PORT:-26443} [target]=${LOCALENV_TARGET_PORT:-26444})
declare -A KCM_PORT=([management]=${LOCALENV_MANAGEMENT_KCM_PORT:-26257} [target]=${LOCALENV_TARGET_KCM_PORT:-26258})

k8s_bin() { echo "$CACHE/kubernetes/$K8S_VERSION/$1"; }

ensure_kubernetes_built() {
  local v errors=""
  for v in $K8S_CANDIDATES; do
    if [[ -x $CACHE/kubernetes/$v/kube-apiserver && -x $CACHE/kubernetes/$v/kube-controller-manager && -x $CACHE/kubernetes/$v/kubectl ]]; then
      K8S_VERSION=$v
      return 0
    fi
  done
  for v in $K8S_CANDIDATES; do
    log "building Kubernetes $v from the Go module proxy (minutes; log: $CACHE/build/kubernetes-$v.log)"
    mkdir -p "$CACHE/build"
    if bash "$HERE/build.sh" k8s "$v" >"$CACHE/build/kubernetes-$v.log" 2>&1; then
      K8S_VERSION=$v
      return 0
    fi
    errors+="  $v: $(tail -n 5 "$CACHE/build/kubernetes-$v.log" | tr '\n' ' ')"$'\n'
    log "Kubernetes $v did not build; trying the next older version"
  done
  die "no Kubernetes version in ($K8S_CANDIDATES) builds with $(go version):"$'\n'"$errors"
}

ensure_etcd_built() {
  [[ -x $CACHE/etcd/$ETCD_VERSION/etcd ]] && return 0
  log "building etcd $ETCD_VERSION from the Go module proxy (log: $CACHE/build/etcd-$ETCD_VERSION.log)"
  mkdir -p "$CACHE/build"
  bash "$HERE/build.sh" etcd "$ETCD_VERSION" >"$CACHE/build/etcd-$ETCD_VERSION.log" 2>&1 ||
    die_with_log "$CACHE/build/etcd-$ETCD_VERSION.log" "etcd $ETCD_VERSION did not build"
}

ensure_helm_built() {
  [[ -x $CACHE/helm/$HELM_VERSION/helm ]] && return 0
  log "building helm $HELM_VERSION from the Go module proxy (log: $CACHE/build/helm-$HELM_VERSION.log)"
  mkdir -p "$CACHE/build"
  bash "$HERE/build.sh" helm "$HELM_VERSION" >"$CACHE/build/helm-$HELM_VERSION.log" 2>&1 ||
    die_with_log "$CACHE/build/helm-$HELM_VERSION.log" "helm $HELM_VERSION did not build"
}

# One CA signs the serving certificates and the client certificates; the admin is in system:masters.
ensure_pki() {
  local pki=$STATE/pki
  [[ -f $pki/admin.crt ]] && return 0
  mkdir -p "$pki"
  (
    cd "$pki"
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=vhost-broker-localenv-ca" \
      -keyout ca.key -out ca.crt 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj "/CN=kube-apiserver" -keyout serving.key -out serving.csr 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' >serving.ext
    openssl x509 -req -in serving.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 \
      -extfile serving.ext -out serving.crt 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj "/O=system:masters/CN=localenv-admin" -keyout admin.key \
      -out admin.csr 2>/dev/null
    printf 'extendedKeyUsage=clientAuth\n' >client.ext
    openssl x509 -req -in admin.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 \
      -extfile client.ext -out admin.crt 2>/dev/null
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
    rm -f ./*.csr
  ) || die "could not create the certificates in $pki (is openssl installed?)"
}

write_kubeconfig() {
  local cluster=$1 file=$STATE/$1.kubeconfig
  cat >"$file" <<KC
apiVersion: v1
kind: Config
clusters:
- name: $cluster
  cluster:
    server: https://127.0.0.1:${API_PORT[$cluster]}
    certificate-authority: $STATE/pki/ca.crt
users:
- name: admin
  user:
    client-certificate: $STATE/pki/admin.crt
    client-key: $STATE/pki/admin.key
contexts:
- name: $cluster
  context:
    cluster: $cluster
    user: admin
current-context: $cluster
KC
}

etcd_healthy() { curl -sf "http://127.0.0.1:$ETCD_PORT/health" | grep -q '"health":"true"'; }

start_etcd() {
  running etcd && return 0
  start etcd "$ETCD_PORT" "$ETCD_PEER_PORT" -- "$CACHE/etcd/$ETCD_VERSION/etcd" \
    --name localenv --data-dir "$STATE/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "localenv=http://127.0.0.1:$ETCD_PEER_PORT" --unsafe-no-fsync=true
  wait_until etcd 60 etcd_healthy
}

apiserver_ready() {
  curl -sf --cacert "$STATE/pki/ca.crt" --cert "$STATE/pki/admin.crt" --key "$STATE/pki/admin.key" \
    "https://127.0.0.1:${API_PORT[$1]}/readyz" | grep -q ok
}

start_apiserver() {
  local cluster=$1 name=$1-apiserver
  running "$name" || {
    start "$name" "${API_PORT[$cluster]}" -- "$(k8s_bin kube-apiserver)" \
      --etcd-servers "http://127.0.0.1:$ETCD_PORT" --etcd-prefix "/$cluster" \
      --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --endpoint-reconciler-type none --secure-port "${API_PORT[$cluster]}" \
      --tls-cert-file "$STATE/pki/serving.crt" --tls-private-key-file "$STATE/pki/serving.key" \
      --client-ca-file "$STATE/pki/ca.crt" \
      --service-cluster-ip-range 10.0.0.0/24 --authorization-mode RBAC \
      --disable-admission-plugins ServiceAccount --allow-privileged=true \
      --service-account-issuer "https://$cluster.localenv.invalid" \
      --service-account-key-file "$STATE/pki/sa.pub" --service-account-signing-key-file "$STATE/pki/sa.key"
  }
  wait_until "$name" 120 apiserver_ready "$cluster"
}

kcm_healthy() { curl -sfk "https://127.0.0.1:${KCM_PORT[$1]}/healthz" | grep -q ok; }

start_controller_manager() {
  local cluster=$1 name=$1-controller-manager
  running "$name" || {
    start "$name" "${KCM_PORT[$cluster]}" -- "$(k8s_bin kube-controller-manager)" \
      --kubeconfig "$STATE/$cluster.kubeconfig" --leader-elect=false --use-service-account-credentials=false \
      --controllers garbage-collector-controller,namespace-controller,serviceaccount-token-controller \
      --service-account-private-key-file "$STATE/pki/sa.key" --root-ca-file "$STATE/pki/ca.crt" \
      --bind-address 127.0.0.1 --secure-port "${KCM_PORT[$cluster]}" \
      --authentication-skip-lookup=true --authorization-always-allow-paths /healthz
  }
  wait_until "$name" 60 kcm_healthy "$cluster"
}

kube_up() {
  ensure_etcd_built
  ensure_kubernetes_built
  ensure_helm_built
  ensure_pki
  start_etcd
  local cluster
  for cluster in management target; do
    write_kubeconfig "$cluster"
    start_apiserver "$cluster"
    start_controller_manager "$cluster"
  done
  echo "$K8S_VERSION" >"$STATE/kubernetes-version"
}

kube_down() {
  local cluster
  for cluster in target management; do
    stop "$cluster-controller-manager"
    stop "$cluster-apiserver"
  done
  stop etcd
}
