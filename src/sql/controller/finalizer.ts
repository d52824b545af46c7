// The finalizer a resource carries under cleanupPolicy Delete only: it holds the resource until the
// database, account or privileges are dropped on the server. Under Skip (the default) there is none,
// so deleting the resource never touches the server.
import type { KindRef } from "../../api/index.ts";

export function finalizerName(kind: KindRef): string {
  return `${kind.group}/${kind.kind.toLowerCase()}-cleanup`;
}
