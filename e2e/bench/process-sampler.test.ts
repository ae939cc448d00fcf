import { describe, expect, it } from 'vitest';
import { combineReplicaUsage, type ResourceUsage } from './process-sampler.ts';

const usage = (rssMax: number | null, cpu: number, samples = 4): ResourceUsage => ({
  samples,
  rssAvgMiB: rssMax === null ? null : rssMax - 10,
  rssMaxMiB: rssMax,
  peakMiB: rssMax === null ? null : rssMax + 1,
  cpuSeconds: cpu,
});

describe('combineReplicaUsage', () => {
  it.each([
    { name: 'one replica unchanged', replicas: [usage(120, 3.5)], combined: usage(120, 3.5) },
    {
      name: 'RSS of the largest replica, CPU and samples summed',
      replicas: [usage(80, 1.11), usage(95.5, 2.22), usage(70, 3.33)],
      combined: { samples: 12, rssAvgMiB: 85.5, rssMaxMiB: 95.5, peakMiB: 96.5, cpuSeconds: 6.66 },
    },
    {
      name: 'a replica never sampled counts for CPU only',
      replicas: [usage(null, 1, 0), usage(60, 2)],
      combined: { samples: 4, rssAvgMiB: 50, rssMaxMiB: 60, peakMiB: 61, cpuSeconds: 3 },
    },
    {
      name: 'none',
      replicas: [],
      combined: { samples: 0, rssAvgMiB: null, rssMaxMiB: null, peakMiB: null, cpuSeconds: 0 },
    },
  ])('$name', ({ replicas, combined }) => {
    expect(combineReplicaUsage(replicas)).toEqual(combined);
  });
});
