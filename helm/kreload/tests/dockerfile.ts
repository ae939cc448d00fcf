// The Dockerfile as data, for the tests that hold the chart, scripts/image.sh and the built image to
// the runtime stage users build. Not a test itself.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { repoRoot } from './chart-harness.ts';

export interface Stage {
  from: string;
  name: string;
  lines: string[];
}

/** Splits a Dockerfile into stages, joining continuation lines and dropping comments. */
export function stagesOf(dockerfile: string): Stage[] {
  const instructions = dockerfile
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const stages: Stage[] = [];
  for (const line of instructions) {
    const from = /^FROM\s+(\S+)(?:\s+AS\s+(\S+))?/i.exec(line);
    if (from) {
      stages.push({ from: from[1] ?? '', name: from[2] ?? '', lines: [] });
    } else {
      stages.at(-1)?.lines.push(line);
    }
  }
  return stages;
}

/** The arguments of every `keyword` instruction of a stage, e.g. instructions(runtime, 'COPY'). */
export function instructions(stage: Stage | undefined, keyword: string): string[] {
  return (stage?.lines ?? [])
    .filter((line) => line.toUpperCase().startsWith(`${keyword} `))
    .map((line) => line.slice(keyword.length + 1).trim());
}

/** `ENV A=1 B=2` instructions as NAME=value strings, in order. */
export function envOf(stage: Stage | undefined): string[] {
  return instructions(stage, 'ENV').flatMap((line) =>
    line.split(/\s+/).filter((pair) => pair.includes('=')),
  );
}

export async function runtimeStage(): Promise<Stage | undefined> {
  return stagesOf(await readFile(join(repoRoot, 'Dockerfile'), 'utf8')).at(-1);
}
