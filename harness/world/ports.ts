import { randomInt } from "node:crypto";
import { createServer } from "node:net";

// The tests start servers (operators' metrics, a private kube-apiserver, a private OpenBao) on ports
// they pick first, and some stop and restart a server on the same port. A port from this band lies
// below the kernel's ephemeral range (32768 and up by default), which outgoing connections draw from,
// so nothing but another server can take it in between. The local environment's own ports lie outside
// it (scripts/localenv/*.sh).
const BAND = { from: 20_000, size: 3_000 };
/**
 * Ports this process handed out: a port is picked before its server binds it, so two picks in a row
 * (an operator's metrics and probe ports) could otherwise return the same one.
 */
const handedOut = new Set<number>();

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** A loopback port nothing listens on, for a server the test starts on it. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = BAND.from + randomInt(BAND.size);
    if (handedOut.has(port) || !(await bindable(port))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error(`no free loopback port in ${BAND.from}-${BAND.from + BAND.size - 1}`);
}
