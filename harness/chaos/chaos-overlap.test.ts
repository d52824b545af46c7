import { describe, expect, it } from "vitest";
import { overlaps, type Span, type StatusTrack } from "./chaos-overlap.ts";

const span = (kind: string, start: number, end: number): Span => ({ kind, start, end });
const track = (rotations: Span[], sweeps: Span[] = []): StatusTrack => ({ rotations, sweeps });

describe("rotations and sweeps under way during a fault", () => {
  it("count a span that meets a fault's, at its edges too, and none that misses every fault", () => {
    const faults = [span("kill", 100, 120), span("rabbitmq", 300, 340)];
    const tracks = [
      track([span("rotation", 90, 100), span("rotation", 121, 299)], [span("sweep", 330, 400)]),
      track([span("rotation", 110, 115)], [span("sweep", 0, 99), span("sweep", 341, 350)]),
    ];
    expect(overlaps(tracks, faults)).toEqual({ rotation: 2, sweep: 1 });
  });

  it("are none without faults", () => {
    expect(overlaps([track([span("rotation", 0, 10)], [span("sweep", 0, 10)])], [])).toEqual({
      rotation: 0,
      sweep: 0,
    });
  });
});
