#!/usr/bin/env node
/**
 * The kubectl plugin entry (`kubectl kreload explain …`, `kubectl kreload history …`; kubectl's
 * PATH convention for a binary named kubectl-kreload): the same CLI as `kreload`, limited to the
 * read-only commands, so a plugin call never starts a controller. Run as a script, it checks the
 * Node.js version before it loads the rest, which an unsupported Node cannot load.
 */
import { runsAsSingleExecutable, unsupportedNodeMessage } from './node-support.ts';

const PLUGIN_COMMANDS: ReadonlySet<string> = new Set([
  'explain',
  'history',
  'hash',
  '--help',
  '-h',
  '--version',
]);

// The single-file executable carries the Node.js it is built and tested with (scripts/plugin.sh).
const unsupported = runsAsSingleExecutable()
  ? undefined
  : unsupportedNodeMessage('kubectl-kreload', process.versions.node);
if (unsupported !== undefined) {
  process.stderr.write(`${unsupported}\n`);
  process.exit(1);
}
const command = process.argv[2];
if (command === undefined || !PLUGIN_COMMANDS.has(command)) {
  process.stderr.write(
    'Usage: kubectl kreload explain <kind>/<name> | <kind> <name> [-n <namespace>] [-o table|wide|json|yaml]\n' +
      '       kubectl kreload history <kind>/<name> | <kind> <name> [-n <namespace>] [-o table|wide|json|yaml] [--show-values]\n' +
      '       kubectl kreload hash -f <manifest.yaml>\n' +
      '       (explain and history also take --context <name> and --kubeconfig <path>)\n',
  );
  process.exit(2);
}
await import('./main.ts');
