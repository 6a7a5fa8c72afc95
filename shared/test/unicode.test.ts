import { describe, expect, it } from 'vitest';
import { firstIllFormedString, wellFormedCopy } from '../src/domain/unicode.js';

const LONE_HIGH = '\ud800';
const LONE_LOW = '\udc00';

describe('strings that are not well-formed Unicode', () => {
  it('are none in a value whose strings are all well-formed, surrogate pairs included', () => {
    expect(firstIllFormedString({ payload: 'emoji \ud83d\ude00', tags: ['a', { b: 'c' }], n: 1, z: null, t: true })).toBeUndefined();
  });

  it.each([
    ['a value', { payload: `bad ${LONE_HIGH}` }, { path: 'payload', inKey: false }],
    ['a lone low surrogate', { user: `${LONE_LOW}x` }, { path: 'user', inKey: false }],
    ['a pair in the wrong order', { payload: `${LONE_LOW}${LONE_HIGH}` }, { path: 'payload', inKey: false }],
    ['a key', { [`k${LONE_HIGH}`]: 'v' }, { path: 'k\ufffd', inKey: true }],
    ['a value nested in arrays and objects', { extra: [{ x: 'ok' }, { y: [LONE_HIGH] }] }, { path: 'extra/1/y/0', inKey: false }],
    ['the value itself', LONE_HIGH, { path: '', inKey: false }],
  ])('are found in %s, with where they are', (_case, value, found) => {
    expect(firstIllFormedString(value)).toEqual(found);
  });

  it('are replaced by U+FFFD in a copy, keys included, leaving the rest as it was', () => {
    const value = { payload: `bad ${LONE_HIGH}`, [`k${LONE_LOW}`]: [LONE_HIGH, 2, null], ok: 'fine \ud83d\ude00' };
    const copy = wellFormedCopy(value);
    expect(copy).toEqual({ payload: 'bad \ufffd', 'k\ufffd': ['\ufffd', 2, null], ok: 'fine \ud83d\ude00' });
    expect(firstIllFormedString(copy)).toBeUndefined();
    expect(value.payload).toBe(`bad ${LONE_HIGH}`);
  });

  it('keep a key named __proto__ as a key in the copy', () => {
    const copy = wellFormedCopy(JSON.parse('{"__proto__": "x\\ud800"}')) as Record<string, unknown>;
    expect(Object.keys(copy)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
  });
});
