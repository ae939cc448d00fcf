import { describe, expect, it } from 'vitest';
import {
  checkDnsLabel,
  checkDnsSubdomain,
  checkLabelValue,
  checkQualifiedName,
} from './k8s-names.ts';

describe('checkQualifiedName (§12.3 annotation keys)', () => {
  it.each([
    'auto',
    'reloader.stakater.com/auto',
    'a/b',
    'A_b.c-D',
    `${'p'.repeat(253)}/n`,
    `x.io/${'n'.repeat(63)}`,
    '1',
  ])('accepts %j', (key) => {
    expect(checkQualifiedName(key)).toBeUndefined();
  });

  it.each([
    '',
    '/a',
    'a/',
    'a/b/c',
    '-a',
    'a-',
    'a b',
    'Upper.io/a',
    `${'p'.repeat(254)}/n`,
    `x.io/${'n'.repeat(64)}`,
    'x_y.io/a',
  ])('rejects %j', (key) => {
    expect(checkQualifiedName(key)).toBeTypeOf('string');
  });
});

describe('DNS names and label values', () => {
  it.each<[(value: string) => string | undefined, string, boolean]>([
    [checkDnsLabel, 'kube-system', true],
    [checkDnsLabel, 'a.b', false],
    [checkDnsLabel, 'A', false],
    [checkDnsLabel, 'a'.repeat(64), false],
    [checkDnsSubdomain, 'kreload-leader', true],
    [checkDnsSubdomain, 'a.b-c', true],
    [checkDnsSubdomain, 'a..b', false],
    [checkDnsSubdomain, 'a_b', false],
    [checkLabelValue, '', true],
    [checkLabelValue, 'Web_1.x', true],
    [checkLabelValue, '.x', false],
  ])('%o %j valid=%s', (check, value, isValid) => {
    expect(check(value) === undefined).toBe(isValid);
  });
});
