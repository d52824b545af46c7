// src/**/*.test.ts import this fake here until their import lines name harness/fakes/kubeconfig.ts.
export * from "../../harness/fakes/kubeconfig.ts";
