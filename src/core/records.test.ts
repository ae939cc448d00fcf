import { describe, expect, it } from 'vitest';
import { pauseResumeDue, readPausePeriod } from '../rollout/pause.ts';
import { aWorkload } from '../testing/builders.ts';
import { parseGoDuration } from './go-duration.ts';
import { parseSourceKey } from './keys.ts';
import { ownValue } from './records.ts';
import { parseHashMap } from './state.ts';

/** Members every plain object inherits from Object.prototype. */
const INHERITED = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf'];
const HASH = 'a'.repeat(40);

describe('keys named after Object.prototype members are not taken as valid', () => {
  it.each(INHERITED)('ownValue(table, %j) is undefined', (name) => {
    expect(ownValue({ configmap: 'CONFIGMAP' }, name)).toBeUndefined();
  });

  it.each(INHERITED)('%j/x is not a source key', (name) => {
    expect(parseSourceKey(`${name}/x`)).toBeUndefined();
  });

  it.each(INHERITED)('a state map with key %j/x is malformed', (name) => {
    expect(parseHashMap(JSON.stringify({ [`${name}/x`]: HASH }))).toEqual({
      map: undefined,
      malformed: true,
    });
  });

  it.each(INHERITED)('1%s is not a Go duration (and does not throw)', (name) => {
    expect(parseGoDuration(`1${name}`)).toBeUndefined();
  });

  it.each(INHERITED)('an annotation key %j that is not set is absent', (name) => {
    const view = aWorkload('Deployment', 'ns', 'app').withAnnotation('other', '1').paused().build();
    expect(readPausePeriod(view, name)).toEqual({ state: 'absent' });
    const keys = { pausePeriod: 'p', pausedAt: name };
    expect(pauseResumeDue(view, 0, keys)).toBeUndefined();
  });

  it('still finds own keys, including one spelled like a prototype member', () => {
    expect(ownValue({ constructor: 'own' }, 'constructor')).toBe('own');
    expect(parseSourceKey('secret/constructor')).toEqual({ type: 'SECRET', name: 'constructor' });
    expect(parseGoDuration('1h')).toBe(3_600_000);
  });
});
