#!/usr/bin/env bash
# Builds the start-up baseline of packaging/measure-startup.sh into target/startup-baseline/: a trivial
# Helidon SE app (src/Hello.java, one route), a runtime linked by packaging/link-runtime.sh as the broker's is
# (the JDK modules it needs, found by jdeps, and Helidon's modules), hello.jar on the class path, and a JDK 25
# AOT cache trained by one start (the broker's image gets the same treatment from
# packaging/build.sh and lib/aot-train). The launcher bin/hello takes the broker's `--config FILE`.
#   bench/startup-baseline/build.sh      (idempotent: rebuilds only what is missing)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
. bin/env.sh
out="$root/target/startup-baseline"
if [ -x "$out/bin/hello" ] && [ -f "$out/lib/hello.aot" ] && grep -q -- --add-modules "$out/bin/hello" \
        && grep -q -- -XX:+UseSerialGC "$out/bin/hello"; then
    echo "startup-baseline: $out is built"; exit 0
fi
rm -rf "$out"
mkdir -p "$out/lib/cp" "$out/bin" "$out/classes"
./mvnw -B -ntp -q -f "$here/pom.xml" dependency:copy-dependencies -DoutputDirectory="$out/lib/cp" -DincludeScope=runtime
javac -d "$out/classes" -cp "$out/lib/cp/*" "$here/src/Hello.java"
jar --create --file "$out/lib/cp/hello.jar" -C "$out/classes" .
rm -rf "$out/classes"
mods=$(jdeps --multi-release 25 --ignore-missing-deps --print-module-deps --class-path "$out/lib/cp/*" "$out/lib/cp/hello.jar")
# linked as packaging/build.sh links the broker: the JDK modules and every jar jlink can link (here all of
# Helidon's); only hello.jar stays on the class path
linked=$("$root/packaging/link-runtime.sh" "$out/lib/cp" "$out/runtime" "$mods")
roots=""
[ -z "$linked" ] || roots="--add-modules $linked"
cat > "$out/bin/hello" <<LAUNCHER
#!/usr/bin/env bash
root="\$(cd "\$(dirname "\$(readlink -f "\$0")")/.." && pwd -P)"
aot=()
[ -f "\$root/lib/hello.aot" ] && aot=(-XX:AOTCache="\$root/lib/hello.aot")
exec "\$root/runtime/bin/java" -XX:+UseSerialGC -XX:-UsePerfData -Xlog:disable -Xlog:all=warning:stderr \\
    "\${aot[@]}" \${HELLO_JAVA_OPTS:-} $roots -cp "\$root/lib/cp/*" Hello "\$@"
LAUNCHER
chmod +x "$out/bin/hello"
# train the AOT cache: one start, one request, SIGTERM (the JVM writes the cache on exit)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
echo "metrics_listen: 127.0.0.1:$port" > "$work/config.yaml"
HELLO_JAVA_OPTS="-XX:AOTCacheOutput=$out/lib/hello.aot.tmp" "$out/bin/hello" --config "$work/config.yaml" > "$work/log" 2>&1 &
pid=$!
for _ in $(seq 1 600); do
    curl -s -f -o /dev/null "http://127.0.0.1:$port/healthz" && break
    kill -0 "$pid" 2>/dev/null || { cat "$work/log" >&2; exit 1; }
    sleep 0.1
done
kill -TERM "$pid"; wait "$pid" || true
mv "$out/lib/hello.aot.tmp" "$out/lib/hello.aot"
echo "startup-baseline: built $out (runtime modules: $mods)"
