// The scenario table (reload-rules.table.ts) over every workload kind with
// --reload-strategy=annotations: rolls write last-reloaded-from and kreload.io/source-hashes into
// the pod template (spec §6.2) and never touch env vars.
import { useKreload } from '../harness/kreload-fixture.ts';
import { defineReloadRuleTable } from './reload-rules.suite.ts';

const fixture = useKreload({
  name: 'reload-annotations',
  args: ([namespace]) => [
    `--namespaces=${String(namespace)}`,
    '--sync-delay=0',
    '--reload-strategy=annotations',
  ],
});

defineReloadRuleTable(fixture, 'annotations');
