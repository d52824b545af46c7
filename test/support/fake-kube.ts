// src/**/*.test.ts import this fake here until their import lines name harness/fakes/fake-kube.ts.
export * from "../../harness/fakes/fake-kube.ts";
