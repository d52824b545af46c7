// src/**/*.test.ts import this fake here until their import lines name harness/fakes/memory-store.ts.
export * from "../../harness/fakes/memory-store.ts";
