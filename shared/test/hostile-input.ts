import fc from 'fast-check';
import { eventIdFor } from '../src/domain/event.js';
import { SNS_MAX_MESSAGE_BYTES } from '../src/domain/limits.js';
import type { SchedulerTopics } from '../src/domain/scheduler-topics.js';
import { PUBLIC_TENANT_ID, type TenantsDocument } from '../src/domain/tenants.js';
import { REGION, SCHEDULER_TOPICS } from './factories.js';

/**
 * Hostile input for the property tests of ingest and the emitter (trust.properties.test.ts), and
 * its nastiest kinds as a fixed sample for the emulator test (infra/test/local/hostile-input.test.ts):
 * strings no one would type, topics of other tenants, of other regions and partitions, and of the
 * scheduler itself, dates out of range, requests that race their own cancels, on any tenant's
 * topic or on no tenant's.
 */

export const ACCOUNT = {
  acme: '111111111111',
  globex: '222222222222',
  initech: '333333333333',
  /** Not a tenant's own: globex may target it (`targetAccounts`). */
  globexGrant: '444444444444',
  /** Owned by both globex and initech. */
  shared: '555555555555',
  /** No tenant's: the public tenant may target it. */
  unregistered: '999999999999',
  /** Registered only by the registries that add tenant "newco". */
  newco: '666666666666',
  /** The scheduler's own account (SCHEDULER_TOPICS), which no tenant owns. */
  scheduler: '000000000000',
} as const;

/** An alarm topic the operator named as the scheduler's own, whatever its name. */
export const OPS_ALARMS = `arn:aws:sns:${REGION}:${ACCOUNT.scheduler}:ops-alarms`;
export const SCHEDULER: SchedulerTopics = { ...SCHEDULER_TOPICS, ownTopicArns: [OPS_ALARMS] };

export function arn(account: string, name: string): string {
  return `arn:aws:sns:${REGION}:${account}:${name}`;
}

/** A topic named `missing-...` does not exist: the fake SNS refuses publishes to it as SNS would. */
export const MISSING_TOPIC_PREFIX = 'missing-';

/**
 * Registries a run starts with or switches to between batches: each one valid (the test checks),
 * each a different answer to who owns which account. `newcoRegistered` gives a new tenant the
 * account the public tenant could target; `globexRemoved` takes a tenant away with its events in
 * flight, and grants its account to others; `publicDisabled` closes the shared topic.
 */
export const REGISTRIES = {
  base: {
    public: { deadLetterTopic: arn(ACCOUNT.unregistered, 'public-dead-letters') },
    tenants: [
      { id: 'acme', accounts: [ACCOUNT.acme], deadLetterTopic: arn(ACCOUNT.acme, 'acme-dead-letters') },
      { id: 'globex', accounts: [ACCOUNT.globex, ACCOUNT.shared], targetAccounts: [ACCOUNT.globexGrant] },
      {
        id: 'initech',
        accounts: [ACCOUNT.initech, ACCOUNT.shared],
        deadLetterTopic: arn(ACCOUNT.shared, 'initech-dead-letters'),
        maxOpenEvents: 4,
      },
    ],
  },
  newcoRegistered: {
    tenants: [
      { id: 'acme', accounts: [ACCOUNT.acme], deadLetterTopic: arn(ACCOUNT.acme, 'acme-dead-letters') },
      { id: 'globex', accounts: [ACCOUNT.globex, ACCOUNT.shared], targetAccounts: [ACCOUNT.globexGrant] },
      {
        id: 'initech',
        accounts: [ACCOUNT.initech, ACCOUNT.shared],
        deadLetterTopic: arn(ACCOUNT.shared, 'initech-dead-letters'),
        maxOpenEvents: 4,
      },
      { id: 'newco', accounts: [ACCOUNT.unregistered, ACCOUNT.newco], deadLetterTopic: arn(ACCOUNT.unregistered, 'public-dead-letters') },
    ],
  },
  globexRemoved: {
    public: {
      targetAccounts: [ACCOUNT.unregistered, ACCOUNT.globexGrant],
      deadLetterTopic: arn(ACCOUNT.unregistered, 'public-dead-letters'),
    },
    tenants: [
      {
        id: 'acme',
        accounts: [ACCOUNT.acme],
        targetAccounts: [ACCOUNT.globexGrant],
        deadLetterTopic: arn(ACCOUNT.acme, 'acme-dead-letters'),
      },
      {
        id: 'initech',
        accounts: [ACCOUNT.initech, ACCOUNT.shared],
        deadLetterTopic: arn(ACCOUNT.shared, 'initech-dead-letters'),
        maxOpenEvents: 4,
      },
    ],
  },
  publicDisabled: {
    public: { enabled: false },
    tenants: [
      { id: 'acme', accounts: [ACCOUNT.acme, ACCOUNT.globexGrant] },
      { id: 'globex', accounts: [ACCOUNT.globex, ACCOUNT.shared] },
    ],
  },
} satisfies Record<string, TenantsDocument>;

export type RegistryName = keyof typeof REGISTRIES;
export const REGISTRY_NAMES = Object.keys(REGISTRIES) as RegistryName[];

/**
 * Whether the scheduler may publish for this tenant to this topic, by the rules as
 * docs/operators/tenants.md states them, written out here apart from the code under test: a topic in the scheduler's
 * partition and region, not one of the scheduler's own, in one of the tenant's accounts or one it
 * was granted, never in another registered tenant's; for the public tenant, any account that is
 * no registered tenant's, as far as its `targetAccounts` allow.
 */
export function mayReceive(registry: TenantsDocument, tenantId: string, topicArn: string): boolean {
  const match = /^arn:aws:sns:([a-z0-9-]+):([0-9]{12}):([A-Za-z0-9_-]{1,256})$/.exec(topicArn);
  if (match === null) return false;
  const [, region, account = '', name = ''] = match;
  if (region !== REGION || topicArn === OPS_ALARMS || (account === ACCOUNT.scheduler && name.startsWith(`${SCHEDULER.topicPrefix}-`)))
    return false;
  const tenants = registry.tenants ?? [];
  const ownedByOthers = tenants.some((entry) => entry.id !== tenantId && entry.accounts.includes(account));
  if (tenantId === PUBLIC_TENANT_ID) return !ownedByOthers && (registry.public?.targetAccounts?.includes(account) ?? true);
  const tenant = tenants.find((entry) => entry.id === tenantId);
  if (tenant === undefined) return false;
  if (tenant.accounts.includes(account)) return true;
  return !ownedByOthers && (tenant.targetAccounts?.includes(account) ?? false);
}

/** Single characters (or pairs) that break naive string handling. */
export const ODD_CHARACTERS = [
  '\u0000', // NUL
  '\u0007',
  '\u001f',
  '\u007f',
  '\n',
  '\r\n',
  '\t',
  '"',
  '\\',
  '/',
  ':',
  '\uffff', // a noncharacter
  '\ufffe',
  '\ufeff', // byte order mark
  '\ufffd',
  '\u200f', // right-to-left mark
  '\u202e', // right-to-left override
  '\u2028', // line separator, which JSON.stringify leaves as it is
  '\u0301', // combining acute accent, alone
  'e\u0301',
  'Z\u0335\u0321\u031b\u0334',
  'é',
  '中',
  '😀', // a surrogate pair
  '👩‍👩‍👧', // joined by zero-width joiners
  '\u{10ffff}',
  '\ud800', // lone high surrogate
  '\udbff',
  '\udc00', // lone low surrogate
  '\udfff',
  '\ude00\ud83d', // a pair in the wrong order
] as const;

const oddCharacter = fc.constantFrom(...ODD_CHARACTERS);

/** One UTF-16 code unit, any of them, lone surrogates included. */
const anyCodeUnit = fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code));

/** Lengths about a boundary, in UTF-16 units: a field's 256, a notice message's 1,024. */
const LENGTHS = [255, 256, 257, 1_023, 1_024, 1_025] as const;
/** Sizes about SNS's limit, in bytes of the JSON text a client publishes: SNS delivers nothing larger. */
const SIZES = [131_072, SNS_MAX_MESSAGE_BYTES - 200, SNS_MAX_MESSAGE_BYTES, SNS_MAX_MESSAGE_BYTES + 1] as const;
/** Characters, and the bytes JSON writes each in (escaped, or as UTF-8). */
const UNITS = { a: 1, é: 2, 中: 3, '😀': 4, '\u0000': 6, '"': 2, '\ud800': 6 } as const;
const unit = fc.constantFrom(...(Object.keys(UNITS) as (keyof typeof UNITS)[]));

/** A long run of one character after a prefix: as long as a field may be, or as large as an SNS message. */
export const hugeString = fc.oneof(
  fc
    .tuple(fc.constantFrom(...LENGTHS), unit, fc.constantFrom('', 'x', '😀'))
    .map(([length, char, prefix]) => prefix + char.repeat(length).slice(0, length)),
  fc.tuple(fc.constantFrom(...SIZES), unit).map(([size, char]) => char.repeat(Math.floor(size / UNITS[char]))),
);

/** Any string a client could put in a JSON text: printable, odd, lone surrogates (via `\u` escapes), huge. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.string({ unit: fc.oneof(oddCharacter, anyCodeUnit, fc.string({ unit: 'grapheme', maxLength: 1 })), maxLength: 12 }),
  },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
  { weight: 1, arbitrary: fc.constantFrom(' ', '__proto__', 'constructor', 'prototype', 'toString', 'null', '{}', '[]') },
  { weight: 1, arbitrary: fc.oneof({ weight: 3, arbitrary: fc.constant('') }, { weight: 1, arbitrary: hugeString }) },
);

/** Values of the wrong type where a string belongs. */
const notAString = fc.oneof(
  fc.constantFrom(null, true, false, 0, -1, 1.5, 1_900_000_000_000, Number.MAX_SAFE_INTEGER, [], {}),
  fc.jsonValue({ maxDepth: 2 }),
);

/**
 * Stands for an account of the tenant whose topic a message is published on, so that a request
 * names its own topics as often as someone else's (see bodyText).
 */
const OWN_ACCOUNT = '{own}';

const WELL_FORMED_NAMES = ['out', 'failures', `${MISSING_TOPIC_PREFIX}topic`, 'a'.repeat(256)] as const;
const SCHEDULER_NAMES = [
  'scheduler-input',
  'scheduler-tenant-acme',
  'scheduler-tenant-globex',
  'scheduler-alarms',
  'scheduler-x',
  'ops-alarms',
] as const;

/** The parts of a topic ARN the rules may take: the scheduler's partition and region, the sender's account or any other, a valid name. */
const topicParts = fc.record({
  partition: fc.constant('aws'),
  service: fc.constant('sns'),
  region: fc.constant(REGION),
  account: fc.oneof(
    { weight: 4, arbitrary: fc.constant(OWN_ACCOUNT) },
    { weight: 1, arbitrary: fc.constantFrom(...Object.values(ACCOUNT)) },
  ),
  name: fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...WELL_FORMED_NAMES) },
    { weight: 1, arbitrary: fc.constantFrom(...SCHEDULER_NAMES) },
  ),
});

type TopicParts = {
  readonly partition: string;
  readonly service: string;
  readonly region: string;
  readonly account: string;
  readonly name: string;
};
const topicText = ({ partition, service, region, account, name }: TopicParts) => `arn:${partition}:${service}:${region}:${account}:${name}`;

/** Each part of a topic ARN, as it may be off by a little. */
const OFF = {
  partition: ['aws-cn', 'aws-us-gov', 'aws-iso', 'AWS', 'awsx', ''],
  service: ['sqs', 'SNS', 's3'],
  region: ['us-east-1', 'cn-north-1', 'us-gov-west-1', 'EU-WEST-1', `${REGION} `, ''],
  account: ['12345678901', '1111111111111', '١١١١١١١١١١١١', '', '11111111111a'],
  name: ['out:extra', 'scheduler-input:x', 'x:scheduler-input', 'out.fifo', 'a'.repeat(257), 'out/x', ''],
} as const;

/** Topics that only look like one a tenant may name: one part off, junk around it, or no ARN at all. */
const lookalikeTopic = fc.oneof(
  fc
    .tuple(topicParts, fc.constantFrom(...(Object.keys(OFF) as (keyof typeof OFF)[])), fc.nat())
    .map(([parts, part, pick]) => topicText({ ...parts, [part]: OFF[part][pick % OFF[part].length] })),
  fc.tuple(topicParts, fc.constantFrom('\n', ' ', ':', '\u0000', '\ud800', '😀', '/x')).map(([parts, suffix]) => topicText(parts) + suffix),
  topicParts.map((parts) => ` ${topicText(parts)}`),
  hostileString,
);

export const topic = fc.oneof({ weight: 6, arbitrary: topicParts.map(topicText) }, { weight: 1, arbitrary: lookalikeTopic });

/**
 * A date, as text in one of the forms ISO-8601 allows (or not), relative to `now`: due at once,
 * soon, within and past the change cutoff, far, at and just past the horizon of `aheadSeconds`,
 * in the distant past and future; and dates that are not dates.
 */
function dateText(now: number, aheadSeconds: number): fc.Arbitrary<string> {
  const horizon = now + aheadSeconds * 1000;
  const at = fc.oneof(
    { weight: 3, arbitrary: fc.integer({ min: now - 2_000, max: now + 30_000 }) },
    { weight: 3, arbitrary: fc.integer({ min: now + 30_000, max: now + 7_200_000 }) },
    { weight: 1, arbitrary: fc.integer({ min: now + 4_000, max: now + 6_000 }) },
    { weight: 1, arbitrary: fc.constantFrom(horizon - 1, horizon, horizon + 1, horizon + 86_400_000) },
    { weight: 1, arbitrary: fc.constantFrom(0, -62_167_219_200_000, now - 3 * 365 * 86_400_000, 253_402_300_799_999, 8.64e15) },
  );
  const rendered = fc
    .tuple(at, fc.constantFrom('iso', 'iso', 'iso', 'offset', 'no-zone', 'space', 'lower', 'comma', 'nanos', 'padded'))
    .map(([ms, form]) => render(ms, form));
  const notADate = fc.constantFrom(
    'next tuesday',
    '2030-02-31T00:00:00Z',
    '2030-13-01T00:00:00Z',
    '2030-01-01T24:00:00Z',
    '2030-01-01T00:00:00+24:00',
    '+275760-09-13T00:00:00Z',
    '',
    ' ',
    'Infinity',
    'NaN',
  );
  return fc.oneof({ weight: 12, arbitrary: rendered }, { weight: 1, arbitrary: notADate });
}

function render(ms: number, form: string): string {
  const iso = new Date(ms).toISOString();
  switch (form) {
    case 'offset': {
      // The same instant, written in +05:30 (the last instant a Date holds has no later local time).
      const local = new Date(ms + 330 * 60_000);
      return Number.isNaN(local.getTime()) ? iso : `${local.toISOString().slice(0, -1)}+05:30`;
    }
    case 'no-zone':
      return iso.slice(0, -1);
    case 'space':
      return iso.replace('T', ' ');
    case 'lower':
      return iso.toLowerCase();
    case 'comma':
      return iso.replace('.', ',');
    case 'nanos':
      return iso.replace('Z', '999999Z');
    case 'padded':
      return ` ${iso}\n`;
    default:
      return iso;
  }
}

/** Client ids that every tenant and user will want. */
const CLIENT_IDS = ['order-1', 'order-2', '__proto__', 'constructor', 'a\u0000b', '😀'] as const;
const clientId = fc.oneof({ weight: 3, arbitrary: fc.constant(CLIENT_IDS[0]) }, { weight: 2, arbitrary: fc.constantFrom(...CLIENT_IDS) });

const USERS = ['alice', 'bob', 'acme', 'globex', PUBLIC_TENANT_ID] as const;
const user = fc.constantFrom(...USERS);

/** A payload SNS takes: short, odd but well-formed, or as large as it gets. */
const payload = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('hello', '{"invoice":42}') },
  { weight: 3, arbitrary: hostileString.map((text) => text.toWellFormed()).filter((text) => text.length > 0) },
  { weight: 1, arbitrary: hugeString.map((text) => text.toWellFormed()) },
);

export const TENANT_IDS = [PUBLIC_TENANT_ID, 'acme', 'globex', 'initech', 'newco'] as const;

/**
 * Keys a request may carry besides its own: prototype-polluting ones, a second `target` or
 * `failure_topic` (JSON.parse takes the last), claims of a tenant.
 */
const extraKey = fc.oneof(
  fc.constantFrom('__proto__', 'constructor', 'prototype', 'target', 'failure_topic', 'tenant', 'action', 'event_id', 'id'),
  hostileString,
);

/** A JSON object as text, its entries in order: keys may repeat, and `__proto__` is an own key. */
export type Entries = readonly (readonly [string, unknown])[];

export function objectText(entries: Entries): string {
  const members = entries.flatMap(([key, value]) => {
    const text = JSON.stringify(value);
    return text === undefined ? [] : [`${JSON.stringify(key)}:${text}`];
  });
  return `{${members.join(',')}}`;
}

/**
 * An event id a control request names: the `m-` id of a message of the run (of one published
 * before it, or its own), the `c-` id of any tenant's client id (anyone can compute one), or
 * junk. Resolved to text by bodyText.
 */
class EventIdRef {
  constructor(readonly spec: { readonly message: number } | { readonly tenant: string; readonly user: string; readonly id: string }) {}

  /** As a counterexample shows it. */
  [fc.toStringMethod](): string {
    return `EventIdRef(${JSON.stringify(this.spec)})`;
  }
}

const eventId: fc.Arbitrary<EventIdRef | string> = fc.oneof(
  { weight: 4, arbitrary: fc.nat().map((message) => new EventIdRef({ message })) },
  {
    weight: 3,
    arbitrary: fc
      .record({ tenant: fc.constantFrom(...TENANT_IDS), user: fc.constantFrom(...USERS, ''), id: clientId })
      .map((spec) => new EventIdRef(spec)),
  },
  { weight: 1, arbitrary: fc.oneof(fc.constantFrom('m-', 'x-1', 'M-1', `m-${'a'.repeat(200)}`, 'm-../../x'), hostileString) },
);

/** What a published message says, before the run knows the ids of its messages and its sender's account. */
export type BodySpec = { readonly kind: 'text'; readonly text: string } | { readonly kind: 'entries'; readonly entries: Entries };

/** How a request's field is spoiled: left out, or set to a hostile string, to what is not a string, or to a lookalike topic. */
type Spoiling = { readonly field: string; readonly drop: true } | { readonly field: string; readonly value: unknown };

const spoiling = (fields: readonly string[]): fc.Arbitrary<Spoiling> =>
  fc.oneof(
    fc.record({ field: fc.constantFrom(...fields), drop: fc.constant(true as const) }),
    fc.record({ field: fc.constantFrom(...fields), value: fc.oneof({ weight: 2, arbitrary: hostileString }, notAString, lookalikeTopic) }),
  );

/**
 * A request: valid fields, then none, one or two of them spoiled, and extra keys before or after
 * its own. Most requests are valid but for one thing, so that runs get far enough to race their
 * cancels and reach the emitter.
 */
function request(valid: fc.Arbitrary<Entries>, fields: readonly string[]): fc.Arbitrary<BodySpec> {
  return fc
    .tuple(
      valid,
      fc.oneof(
        { weight: 3, arbitrary: fc.constant([]) },
        { weight: 1, arbitrary: fc.array(spoiling(fields), { minLength: 1, maxLength: 2 }) },
      ),
      fc.oneof(
        { weight: 3, arbitrary: fc.constant([]) },
        { weight: 1, arbitrary: fc.array(fc.tuple(extraKey, fc.oneof(topic, fc.jsonValue({ maxDepth: 2 }))), { maxLength: 2 }) },
      ),
      fc.boolean(),
    )
    .map(([entries, spoilings, extra, extraFirst]) => {
      let own = [...entries];
      for (const spoiled of spoilings) {
        if ('drop' in spoiled) own = own.filter(([key]) => key !== spoiled.field);
        else if (own.some(([key]) => key === spoiled.field))
          own = own.map(([key, old]) => [key, key === spoiled.field ? spoiled.value : old] as const);
        else own = [...own, [spoiled.field, spoiled.value] as const];
      }
      return { kind: 'entries' as const, entries: extraFirst ? [...extra, ...own] : [...own, ...extra] };
    });
}

/** A schedule request, with or without its optional fields. */
function scheduleRequest(now: number, aheadSeconds: number): fc.Arbitrary<BodySpec> {
  const valid = fc
    .record(
      {
        date: dateText(now, aheadSeconds),
        target: topic,
        user,
        payload,
        failure_topic: topic,
        id: clientId,
        action: fc.constant('schedule'),
      },
      { requiredKeys: ['date', 'target', 'user', 'payload'] },
    )
    .map((fields): Entries => Object.entries(fields));
  return request(valid, ['date', 'target', 'user', 'payload', 'failure_topic', 'id', 'action']);
}

/** A cancel or reschedule, naming its event by client id or by event id (or, spoiled, by both or neither). */
function controlRequest(now: number, aheadSeconds: number): fc.Arbitrary<BodySpec> {
  const valid = fc
    .tuple(
      fc.constantFrom('cancel', 'reschedule'),
      fc.oneof(
        clientId.map((id): [string, unknown] => ['id', id]),
        eventId.map((ref): [string, unknown] => ['event_id', ref]),
      ),
      dateText(now, aheadSeconds),
      fc.option(user, { nil: undefined }),
      fc.option(topic, { nil: undefined }),
    )
    .map(
      ([action, name, date, who, failureTopic]): Entries => [
        ['action', action],
        name,
        ...(action === 'reschedule' ? [['date', date] as const] : []),
        ...(who === undefined ? [] : [['user', who] as const]),
        ...(failureTopic === undefined ? [] : [['failure_topic', failureTopic] as const]),
      ],
    );
  return request(valid, ['action', 'id', 'event_id', 'date', 'user', 'failure_topic']);
}

/** Arrays and objects nested around the limit of 64, and far past it. */
const deeplyNested = fc
  .tuple(fc.constantFrom(63, 64, 65, 66, 5_000), fc.boolean())
  .map(([depth, arrays]) => (arrays ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`));

/** Text a client could publish that is no request: not JSON, JSON of any shape, nested too deep. */
const junk = fc.oneof(
  fc.jsonValue({ maxDepth: 4, stringUnit: fc.oneof(oddCharacter, anyCodeUnit) }).map((value) => JSON.stringify(value)),
  // SNS carries only well-formed text: a lone surrogate reaches ingest only through a JSON escape.
  fc.oneof(hostileString, fc.string({ unit: 'binary-ascii' })).map((text) => text.toWellFormed()),
  deeplyNested,
  fc.constantFrom('{', '{"date":', 'null', '"a string"', '[]', '{}', '1e999', '{"__proto__":{"target":"x"}}', '\ufeff{}'),
);

/** The body of one published message. */
export function body(now: number, aheadSeconds: number): fc.Arbitrary<BodySpec> {
  return fc.oneof(
    { weight: 8, arbitrary: scheduleRequest(now, aheadSeconds) },
    { weight: 5, arbitrary: controlRequest(now, aheadSeconds) },
    { weight: 1, arbitrary: junk.map((text) => ({ kind: 'text' as const, text })) },
  );
}

/** The SNS MessageId of a run's message number `n`, as SNS assigns them. */
export function messageIdOf(n: number): string {
  return `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
}

/**
 * The text a body spec stands for, as message number `number` of its run: its `m-` references
 * name one of the messages up to it, and its own topics are in `ownAccount`.
 */
export function bodyText(spec: BodySpec, number: number, ownAccount: string): string {
  if (spec.kind === 'text') return spec.text;
  const eventIdText = ({ spec: ref }: EventIdRef) =>
    'message' in ref ? `m-${messageIdOf(ref.message % (number + 1))}` : eventIdFor(ref.tenant, ref.user, ref.id, '');
  const entries = spec.entries.map(([key, value]): readonly [string, unknown] => [
    key,
    value instanceof EventIdRef ? eventIdText(value) : value,
  ]);
  return withOwnAccount(objectText(entries), ownAccount);
}

/** A text (a topic, a request) with its sender's own topics put in `ownAccount`. */
export function withOwnAccount(text: string, ownAccount: string): string {
  return text.replaceAll(OWN_ACCOUNT, ownAccount);
}

/** Where a message comes from: a tenant's input topic, a topic that is no tenant's, or no SNS at all. */
export const SOURCES = ['public', 'acme', 'globex', 'initech', 'newco', 'nobody', 'alarms', 'not-sns'] as const;
export type Source = (typeof SOURCES)[number];
export const source: fc.Arbitrary<Source> = fc.oneof(
  { weight: 8, arbitrary: fc.constant('acme') },
  { weight: 4, arbitrary: fc.constant('public') },
  { weight: 3, arbitrary: fc.constantFrom('globex', 'initech') },
  { weight: 1, arbitrary: fc.constantFrom('newco', 'nobody', 'alarms', 'not-sns') },
);

/** An account whose topics the sender of a message may name, in the base registry (the unregistered one for the public tenant). */
export const ACCOUNT_OF: Readonly<Record<Source, string>> = {
  public: ACCOUNT.unregistered,
  acme: ACCOUNT.acme,
  globex: ACCOUNT.globexGrant,
  initech: ACCOUNT.shared,
  newco: ACCOUNT.newco,
  nobody: ACCOUNT.acme,
  alarms: ACCOUNT.scheduler,
  'not-sns': ACCOUNT.acme,
};

export function inputTopicOf(from: Exclude<Source, 'not-sns'>): string {
  if (from === 'public') return arn(ACCOUNT.scheduler, `${SCHEDULER.topicPrefix}-input`);
  if (from === 'alarms') return arn(ACCOUNT.scheduler, `${SCHEDULER.topicPrefix}-alarms`);
  return arn(ACCOUNT.scheduler, `${SCHEDULER.topicPrefix}-tenant-${from}`);
}
