import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, type RunnerTask, type RunnerTestFile } from "vitest";

/** A folder in the temporary directory for the logs of the processes a test file runs. */
export interface ScratchFolder {
  /** Its path; the folder is made on first use. */
  readonly path: string;
  /**
   * Once the processes writing there have stopped: removes the folder when nothing of the test file
   * failed, or keeps it and prints where it is, so their logs can be read.
   */
  release(): void;
}

/**
 * A scratch folder named `prefix` and six letters; `what` names its content in the message that keeps
 * it. Call it while the test file is collected (in a describe body, or at the top of a support module
 * the file imports): its beforeEach learns the file, whose tests and hooks `release` then reads.
 */
export function scratchFolder(prefix: string, what: string): ScratchFolder {
  let path: string | undefined;
  let file: Readonly<RunnerTestFile> | undefined;
  beforeEach(({ task }) => {
    file = task.file;
  });
  return {
    get path() {
      return (path ??= mkdtempSync(join(tmpdir(), prefix)));
    },
    release() {
      if (path === undefined) return;
      // No test began: a beforeAll failed (its tests are then skipped, not failed).
      if (!file || failed(file)) console.log(`${what} under ${path}`);
      else rmSync(path, { recursive: true, force: true });
      path = undefined;
    },
  };
}

/** Whether the task, or a test or suite under it, failed (a failing beforeAll or afterAll fails its suite). */
const failed = (task: Readonly<RunnerTask>): boolean =>
  task.result?.state === "fail" || ("tasks" in task && task.tasks.some(failed));
