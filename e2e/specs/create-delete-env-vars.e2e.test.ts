// Spec §5.5 with both flags on, env-vars strategy (see create-delete.suite.ts).
import { useKreload } from '../harness/kreload-fixture.ts';
import { defineCreateDeleteSuite } from './create-delete.suite.ts';

const fixture = useKreload({
  name: 'create-delete-env-vars',
  args: ([namespace]) => [
    `--namespaces=${String(namespace)}`,
    '--sync-delay=0',
    '--reload-on-create=true',
    '--reload-on-delete=true',
    '--resources-to-ignore=secrets',
  ],
});

defineCreateDeleteSuite(fixture, 'env-vars');
