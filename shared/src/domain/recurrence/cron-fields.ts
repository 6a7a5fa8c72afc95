// EventBridge Scheduler's cron fields, checked as its documentation states them, and written
// as the croner pattern that computes the same calendar. croner parses and evaluates; this
// module only refuses what EventBridge refuses and rewrites what the two write differently.

/** One field of `cron(minutes hours day-of-month month day-of-week year)`. */
interface Field {
  readonly name: string;
  readonly min: number;
  readonly max: number;
  /** Names for the values from `min` on (JAN for 1, SUN for 1). */
  readonly names?: readonly string[];
  /** Whether `/` steps are allowed (EventBridge allows none in day-of-week). */
  readonly steps: boolean;
}

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const WEEKDAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

const MINUTES: Field = { name: 'minutes', min: 0, max: 59, steps: true };
const HOURS: Field = { name: 'hours', min: 0, max: 23, steps: true };
const DAY_OF_MONTH: Field = { name: 'day-of-month', min: 1, max: 31, steps: true };
const MONTH: Field = { name: 'month', min: 1, max: 12, names: MONTHS, steps: true };
const DAY_OF_WEEK: Field = { name: 'day-of-week', min: 1, max: 7, names: WEEKDAYS, steps: false };
const YEAR: Field = { name: 'year', min: 1970, max: 2199, steps: true };

/** Why a field is refused, as the client will read it. */
export class FieldError extends Error {}

function value(field: Field, text: string): number {
  const named = field.names?.indexOf(text.toUpperCase()) ?? -1;
  const number = named >= 0 ? field.min + named : /^\d{1,4}$/.test(text) ? Number(text) : Number.NaN;
  if (!(number >= field.min && number <= field.max)) {
    throw new FieldError(`${field.name}: "${text}" is not a value from ${field.min} to ${field.max}${field.names ? ' or a name' : ''}`);
  }
  return number;
}

/** One item of a list: `*`, `v`, `a-b`, each with an optional `/step`; `v/step` counts from v. */
function item(field: Field, text: string): string {
  const [range = '', step, extra] = text.split('/');
  if (extra !== undefined || (step !== undefined && !field.steps))
    throw new FieldError(`${field.name}: "${text}" is not a value, a range or a step`);
  if (step !== undefined && !(/^\d{1,4}$/.test(step) && Number(step) >= 1))
    throw new FieldError(`${field.name}: the step of "${text}" is not a whole number of at least 1`);
  const suffix = step === undefined ? '' : `/${Number(step)}`;
  if (range === '*') return `*${suffix}`;
  const [first = '', last, more] = range.split('-');
  if (more !== undefined) throw new FieldError(`${field.name}: "${text}" is not a range`);
  const low = value(field, first);
  if (last === undefined) return step === undefined ? `${low}` : `${low}-${field.max}${suffix}`;
  const high = value(field, last);
  if (high < low) throw new FieldError(`${field.name}: the range "${range}" runs backwards`);
  return `${low}-${high}${suffix}`;
}

function list(field: Field, text: string): string {
  return text
    .split(',')
    .map((part) => item(field, part))
    .join(',');
}

/** Day-of-month: a list, or alone `L` (the last day), `LW` (the last weekday) or `nW` (the weekday nearest the nth). */
function dayOfMonth(text: string): string {
  const upper = text.toUpperCase();
  if (upper === 'L' || upper === 'LW') return upper;
  const nearest = /^(\d{1,2})W$/.exec(upper);
  if (nearest) return `${value(DAY_OF_MONTH, nearest[1] ?? '')}W`;
  if (/[LW]/.test(upper)) throw new FieldError(`day-of-month: "${text}": L and W stand alone (L, LW or nW), never in a list or range`);
  return list(DAY_OF_MONTH, text);
}

/**
 * Day-of-week, 1 (SUN) to 7 (SAT): a list, or alone `L` (Saturday, the week's last day), `dL`
 * (the month's last weekday d) or `d#k` (its kth weekday d; one such expression only).
 */
function dayOfWeek(text: string): string {
  const upper = text.toUpperCase();
  if (upper === 'L') return `${DAY_OF_WEEK.max}`;
  const last = /^(\w+)L$/.exec(upper);
  if (last) return `${value(DAY_OF_WEEK, last[1] ?? '')}#L`;
  const nth = /^(\w+)#(\d)$/.exec(upper);
  if (nth) {
    const k = Number(nth[2]);
    if (k < 1 || k > 5) throw new FieldError(`day-of-week: "${text}": the week of the month after # runs from 1 to 5`);
    return `${value(DAY_OF_WEEK, nth[1] ?? '')}#${k}`;
  }
  if (/[L#]/.test(upper)) throw new FieldError(`day-of-week: "${text}": L and # stand alone (L, dL or d#k), never in a list or range`);
  return list(DAY_OF_WEEK, text);
}

/**
 * The croner pattern (seconds first, then EventBridge's six fields) for an EventBridge cron
 * expression's fields, or a FieldError saying what EventBridge would refuse.
 */
export function cronerPattern(fields: readonly string[]): string {
  if (fields.length !== 6)
    throw new FieldError(`cron takes six fields (minutes hours day-of-month month day-of-week year), not ${fields.length}`);
  const [minutes = '', hours = '', dom = '', month = '', dow = '', year = ''] = fields;
  if ((dom === '?') === (dow === '?')) {
    throw new FieldError('one of day-of-month and day-of-week must be ?, and only one');
  }
  if ([minutes, hours, month, year].includes('?')) throw new FieldError('? stands only in day-of-month or day-of-week');
  // croner reads ? as *; either way the other day field alone decides.
  const days = dom === '?' ? ['*', dayOfWeek(dow)] : [dayOfMonth(dom), '*'];
  return ['0', list(MINUTES, minutes), list(HOURS, hours), days[0], list(MONTH, month), days[1], list(YEAR, year)].join(' ');
}
