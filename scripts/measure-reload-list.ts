/**
 * Measures what parsing issue 10's hostile reload-list value costs (ADR 0018): four elements of
 * `(?:[a-b][a-c]…){1000}`, 20 KiB in all by default.
 * Run `npx node --expose-gc scripts/measure-reload-list.ts [module] [pairs]`: `module` is the
 * annotation-values.ts to load (default this checkout's; pass another checkout's to compare) and
 * `pairs` the `[a-b][a-c]` pairs per element (default 500).
 */
import { pathToFileURL } from 'node:url';

interface ParsedList {
  readonly patterns: readonly unknown[];
  readonly invalid: readonly unknown[];
}

const [modulePath, pairsText = '500'] = process.argv.slice(2);
const moduleUrl =
  modulePath === undefined
    ? new URL('../src/core/annotation-values.ts', import.meta.url)
    : pathToFileURL(modulePath);
const { parseReloadList } = (await import(moduleUrl.href)) as {
  parseReloadList: (value: string) => ParsedList;
};
const collect = (): void => {
  (globalThis as { gc?: () => void }).gc?.();
};

const body = '[a-b][a-c]'.repeat(Number(pairsText));
const value = ['', 'x', 'y', 'z'].map((suffix) => `(?:${body}${suffix}){1000}`).join(',');
parseReloadList('warm-up-[a-z]+');
collect();
const before = process.memoryUsage();
const startedAt = performance.now();
const parsed = parseReloadList(value);
const elapsedMs = performance.now() - startedAt;
const rssAfter = process.memoryUsage().rss;
collect();
const heapAfter = process.memoryUsage().heapUsed;
const mib = (bytes: number): string => (bytes / 2 ** 20).toFixed(2);
console.log(
  `${value.length} characters: ${elapsedMs.toFixed(1)} ms, retained heap +${mib(heapAfter - before.heapUsed)} MiB, ` +
    `RSS +${mib(rssAfter - before.rss)} MiB; ${parsed.patterns.length} compiled, ${parsed.invalid.length} skipped`,
);
