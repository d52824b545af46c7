// src/**/*.test.ts import this fake here until their import lines name harness/fakes/fake-clock.ts.
export * from "../../harness/fakes/fake-clock.ts";
