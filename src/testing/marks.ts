/** §5.4 marks for tests, as the mark store makes them. */
import type { CreateMark, DeleteMark } from '../core/marks.ts';
import type { Annotations, SourceKey } from '../core/types.ts';

export function aCreateMark(sourceKey: SourceKey, uid: string, at = 0): CreateMark {
  return { kind: 'create', sourceKey, uid, at };
}

export function aDeleteMark(
  sourceKey: SourceKey,
  uid: string,
  sourceAnnotations: Annotations = {},
  at = 0,
): DeleteMark {
  return { kind: 'delete', sourceKey, uid, at, sourceAnnotations };
}
