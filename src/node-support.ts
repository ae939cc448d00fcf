/**
 * Which Node.js runs kreload: package.json's `engines.node` (a test keeps them equal). The kubectl
 * plugin's entry checks it before it loads the bundle, which an older Node cannot even link, so a
 * user with the wrong Node reads one line instead of a stack of minified code. No imports: this
 * must load on any Node that runs ES modules.
 */
export const NODE_ENGINES = '>=24.11.0 <25';

/** The version triple of `1.2.3` or `v1.2.3`; undefined when it is not one. */
function triple(text: string): readonly [number, number, number] | undefined {
  const match = /^v?(\d+)\.(\d+)\.(\d+)/.exec(text);
  return match ? [Number(match[1]), Number(match[2]), Number(match[3])] : undefined;
}

/** The one line to print when `version` (process.versions.node) is outside NODE_ENGINES. */
export function unsupportedNodeMessage(program: string, version: string): string | undefined {
  const range = /^>=(\S+) <(\d+)$/.exec(NODE_ENGINES);
  const minimum = triple(range?.[1] ?? '');
  const running = triple(version);
  if (minimum === undefined || running === undefined) {
    return `${program} needs Node.js ${NODE_ENGINES}; cannot tell which Node.js this is ("${version}")`;
  }
  const below = Number(range?.[2]);
  const [major, minor, patch] = running;
  const [wantMajor, wantMinor, wantPatch] = minimum;
  const tooOld =
    major !== wantMajor
      ? major < wantMajor
      : minor !== wantMinor
        ? minor < wantMinor
        : patch < wantPatch;
  if (!tooOld && major < below) return undefined;
  return `${program} needs Node.js ${NODE_ENGINES}, this is Node.js ${version}: install Node.js 24, or use the single-file ${program} executable, which needs no Node.js`;
}

/**
 * Whether this process is a single-executable application (the released kubectl-kreload
 * executable). Asked through process.getBuiltinModule, which an old Node.js lacks, so that this
 * module still loads there.
 */
export function runsAsSingleExecutable(): boolean {
  const sea = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule?.(
    'node:sea',
  ) as { isSea?: () => boolean } | undefined;
  return sea?.isSea?.() ?? false;
}
