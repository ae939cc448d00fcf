import { describe, expect, it } from 'vitest';
import {
  buildLabelSelector,
  checkLabelSelector,
  normaliseSelectorElement,
} from './label-selector.ts';

describe('normaliseSelectorElement (§11 item 2)', () => {
  it.each([
    ['team:a', 'team=a'],
    [' team : a ', 'team=a'],
    ['team:*', 'team'],
    ['team=*', 'team'],
    ['example.com/team:*', 'example.com/team'],
    ['team=a', 'team=a'],
    ['team!=a', 'team!=a'],
    ['team in (a,b)', 'team in (a,b)'],
    ['!team', '!team'],
    ['team', 'team'],
  ])('%j → %j', (element, normalised) => {
    expect(normaliseSelectorElement(element)).toBe(normalised);
  });
});

describe('checkLabelSelector: accepted', () => {
  it.each([
    '',
    'a',
    '!a',
    'a=b',
    'a==b',
    'a!=b',
    'a=',
    'a in (x)',
    'a in (x,y)',
    'a notin (x, y )',
    'a>1',
    'a < 2',
    'example.com/app=web,tier!=db,!legacy,env in (prod,staging)',
    ' a = b , c ',
    'A_b.c-d=X_y.z',
  ])('%j', (selector) => {
    expect(checkLabelSelector(selector)).toBeUndefined();
  });
});

describe('checkLabelSelector: rejected', () => {
  it.each([
    [',', "found ',', expected a key"],
    ['a,', "found 'end of selector', expected a key"],
    ['a b', "found 'b', expected one of: in, notin, =, ==, !=, >, <"],
    ['a=b c', "found 'c', expected ','"],
    ['a in x', "found 'x', expected '(' after 'in'"],
    ['a in ()', "values of 'in' must not be empty"],
    ['a notin (x', "found 'end of selector', expected ',' or ')'"],
    ['a in (x y)', "found 'y', expected ',' or ')'"],
    ['a in (=)', "found '=', expected a value or ')'"],
    ['a>b', "value \"b\" of '>' or '<' must be an integer"],
    ['!a=b', "unexpected '=' after '!key'"],
    ['a=b=c', "found '=', expected ','"],
    [
      'a=*',
      'invalid value "*": must be empty or consist of alphanumeric characters, "-", "_" or ".", and start and end with an alphanumeric character',
    ],
    [
      '-a',
      'invalid key "-a": name must consist of alphanumeric characters, "-", "_" or ".", and start and end with an alphanumeric character',
    ],
    ['a/b/c', 'invalid key "a/b/c": must have at most one "/"'],
    [`a=${'v'.repeat(64)}`, `invalid value "${'v'.repeat(64)}": must be at most 63 characters`],
    ['=a', "found '=', expected a key"],
    // apimachinery validates Gt/Lt values as label values too, so negative numbers are out.
    [
      'a<-2',
      'invalid value "-2": must be empty or consist of alphanumeric characters, "-", "_" or ".", and start and end with an alphanumeric character',
    ],
  ])('%j: %s', (selector, problem) => {
    expect(checkLabelSelector(selector)).toBe(problem);
  });
});

describe('buildLabelSelector', () => {
  it.each<[string[], string]>([
    [[], ''],
    [['team:a', 'env in (x,y)', 'reload:*'], 'team=a,env in (x,y),reload'],
    [['a=b', ' '], 'a=b'],
  ])('%j → %j', (elements, selector) => {
    expect(buildLabelSelector(elements)).toEqual({ ok: true, selector });
  });

  it('names the normalised selector in the problem', () => {
    expect(buildLabelSelector(['team:a b'])).toEqual({
      ok: false,
      problem: "invalid label selector \"team=a b\": found 'b', expected ','",
    });
  });
});
