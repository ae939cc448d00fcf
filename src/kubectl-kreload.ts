#!/usr/bin/env node
/**
 * The kubectl plugin entry (`kubectl kreload explain …`, `kubectl kreload history …`; kubectl's
 * PATH convention for a binary named kubectl-kreload): the same CLI as `kreload`, limited to the read-only commands, so a
 * plugin call never starts a controller.
 */
const PLUGIN_COMMANDS: ReadonlySet<string> = new Set([
  'explain',
  'history',
  'hash',
  '--help',
  '-h',
  '--version',
]);

const command = process.argv[2];
if (command === undefined || !PLUGIN_COMMANDS.has(command)) {
  process.stderr.write(
    'Usage: kubectl kreload explain <kind>/<name> [-n <namespace>] [-o table|json|yaml]\n' +
      '       kubectl kreload history <kind>/<name> [-n <namespace>] [-o table|json|yaml] [--show-values]\n' +
      '       kubectl kreload hash -f <manifest.yaml>\n',
  );
  process.exit(2);
}
await import('./main.ts');
