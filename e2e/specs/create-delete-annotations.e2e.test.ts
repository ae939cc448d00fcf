// Spec §5.5 with both flags on, annotations strategy (see create-delete.suite.ts).
import { useKreload } from '../harness/kreload-fixture.ts';
import { defineCreateDeleteSuite } from './create-delete.suite.ts';

const fixture = useKreload({
  name: 'create-delete-annotations',
  args: ([namespace]) => [
    `--namespaces=${String(namespace)}`,
    '--sync-delay=0',
    '--reload-on-create=true',
    '--reload-on-delete=true',
    '--resources-to-ignore=secrets',
    '--reload-strategy=annotations',
  ],
});

defineCreateDeleteSuite(fixture, 'annotations');
