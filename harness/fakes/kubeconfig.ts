import type { Kubeconfig } from "../../src/runtime/port/kubeconfig.ts";

/** A kubeconfig for unit tests whose client never reaches a server. */
export function testKubeconfig(server = "https://127.0.0.1:6443"): Kubeconfig {
  return {
    source: "a test",
    context: "test",
    cluster: { name: "test", server, insecureSkipTlsVerify: false },
    user: { name: "" },
  };
}
