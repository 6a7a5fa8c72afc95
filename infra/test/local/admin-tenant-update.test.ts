import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { AdminError, LocalTenants, registerTenant, removeTenant } from '../../src/index.js';
import { LOCAL_ACCOUNT, LOCAL_REGION } from '../../src/local/runtime.js';
import { admin } from './admin-run.js';
import { expectNotEarly, request, SchedulerClient, sharedEmulators, startServiceWithFiles, TopicConsumer, waitFor } from './kit.js';

const emulators = sharedEmulators();
const DEAD_LETTERS = `arn:aws:sns:${LOCAL_REGION}:${LOCAL_ACCOUNT}:acme-dead-letters`;

/** A running service, with acme registered by tenant add. */
async function setup() {
  const service = await startServiceWithFiles(emulators);
  const { where } = service;
  const added = await admin(
    'tenant',
    'add',
    'acme',
    '--account',
    '111111111111',
    '--target-account',
    LOCAL_ACCOUNT,
    '--dead-letter-topic',
    DEAD_LETTERS,
    '--max-open-events',
    '5',
    ...where,
  );
  expect(added.code).toBe(0);
  const registry = async () => JSON.parse(await readFile(service.tenantsFile, 'utf8'));
  return { ...service, topicArn: added.stdout.trim(), registry };
}

describe.concurrent('scripts/admin tenant update and tenant show', () => {
  it('changes only the settings its flags give, and the running service applies them; refuses an unknown id and a registry that breaks a rule', async () => {
    const { scheduler, where, topicArn, registry, stop } = await setup();
    const target = await TopicConsumer.create(scheduler.outputs.endpoint, 'target');
    const acme = new SchedulerClient(scheduler, topicArn);
    try {
      const quota = await admin('tenant', 'update', 'acme', '--max-open-events', '7', ...where);
      expect(quota.code).toBe(0);
      expect(quota.stdout.trim()).toBe(topicArn);
      expect(quota.stderr).toContain('was: accounts 111111111111; may also target 000000000000; dead-letter topic');
      expect(quota.stderr).toContain('at most 7 open events');
      expect((await registry()).tenants).toEqual([
        { id: 'acme', accounts: ['111111111111'], targetAccounts: [LOCAL_ACCOUNT], deadLetterTopic: DEAD_LETTERS, maxOpenEvents: 7 },
      ]);

      expect((await admin('tenant', 'update', 'acme', '--user-optional', ...where)).code).toBe(0);
      expect((await registry()).tenants[0]).toMatchObject({ maxOpenEvents: 7, deadLetterTopic: DEAD_LETTERS, requireUser: false });
      // The service reads the change: a request without a user is the tenant's now.
      const { user: _none, ...withoutUser } = request(target.topicArn, Date.now() + 1_500, 'without a user');
      await acme.publish(withoutUser);
      expectNotEarly(await waitFor(() => target.withPayload('without a user')[0], 'the request without a user delivered'));
      expect((await admin('tenant', 'update', 'acme', '--user-required', ...where)).code).toBe(0);
      expect((await registry()).tenants[0]).not.toHaveProperty('requireUser');

      const unknown = await admin('tenant', 'update', 'nobody', '--max-open-events', '1', ...where);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toContain('tenant "nobody" is not registered in');
      expect(unknown.stderr).toContain('tenant add registers it');
      expect((await admin('tenant', 'add', 'globex', '--account', '222222222222', ...where)).code).toBe(0);
      const before = await registry();
      const theirs = await admin(
        'tenant',
        'update',
        'acme',
        '--target-account',
        LOCAL_ACCOUNT,
        '--target-account',
        '222222222222',
        ...where,
      );
      expect(theirs.code).toBe(1);
      expect(theirs.stderr).toContain('tenant "acme" cannot be registered so');
      expect(theirs.stderr).toContain('globex');
      expect(await registry()).toEqual(before);
      expect((await admin('tenant', 'update', 'acme', '--user-optional', '--user-required', ...where)).code).toBe(2);
    } finally {
      acme.destroy();
      await target.stop();
      await stop();
    }
  });

  it("shows one tenant's settings, topic, pause and open events; one removed, with until when its id is its own", async () => {
    const { scheduler, where, topicArn, stop } = await setup();
    const acme = new SchedulerClient(scheduler, topicArn);
    try {
      await acme.publish(request(`arn:aws:sns:${LOCAL_REGION}:${LOCAL_ACCOUNT}:acme-out`, Date.now() + 3_600_000, 'later'));
      expect((await admin('tenant', 'pause', 'acme', '--note', 'billing overdue', ...where)).code).toBe(0);
      const shown = await waitFor(async () => {
        const json = JSON.parse((await admin('tenant', 'show', 'acme', '--json', ...where)).stdout);
        return json.openEvents === 1 && json;
      }, "the tenant's event counted");
      expect(shown).toMatchObject({
        id: 'acme',
        accounts: ['111111111111'],
        maxOpenEvents: 5,
        requireUser: true,
        inputTopicArn: topicArn,
        deadLetterTopic: DEAD_LETTERS,
        paused: { note: 'billing overdue', owner: 'operator' },
        openEvents: 1,
      });
      const text = await admin('tenant', 'show', 'acme', ...where);
      expect(text.stdout).toMatch(/^tenant +acme$/m);
      expect(text.stdout).toMatch(/^may target +own,000000000000$/m);
      expect(text.stdout).toMatch(new RegExp(`^input topic +${topicArn}$`, 'm'));
      expect(text.stdout).toMatch(/^paused +by .* since \S+Z: billing overdue$/m);
      expect(text.stdout).toMatch(/^open events +1 \(its quota counter/m);

      expect((await admin('tenant', 'add', 'hooli', '--account', '333333333333', ...where)).code).toBe(0);
      expect((await admin('tenant', 'remove', 'hooli', ...where)).code).toBe(0);
      const removed = await admin('tenant', 'show', 'hooli', ...where);
      expect(removed.code).toBe(1);
      expect(removed.stderr).toMatch(/tenant "hooli" is not registered in .*; it was removed at \S+Z, and its id is its own until \S+Z/);
      const never = await admin('tenant', 'show', 'nobody', ...where);
      expect(never.code).toBe(1);
      expect(never.stderr).toMatch(/tenant "nobody" is not registered in \S+$/m);
    } finally {
      acme.destroy();
      await stop();
    }
  });
});

describe("the tenant operations, from an operator's own code", () => {
  it('registers a tenant and removes it as the CLI does, through the infra package', async () => {
    const service = await startServiceWithFiles(emulators);
    const place = new LocalTenants(service.tenantsFile, service.outputsFile);
    try {
      const registered = await registerTenant({ id: 'signup-1', accounts: ['444444444444'], maxOpenEvents: 100 }, place, {
        restore: false,
      });
      expect(registered).toMatchObject({ previous: undefined, warning: expect.stringContaining(`--target-account ${LOCAL_ACCOUNT}`) });
      expect(registered.topicArn).toMatch(/-tenant-signup-1$/);
      expect(JSON.parse((await admin('tenant', 'show', 'signup-1', '--json', ...service.where)).stdout)).toMatchObject({
        inputTopicArn: registered.topicArn,
        maxOpenEvents: 100,
      });
      // Refused as the CLI refuses it, with its message.
      const invalid = registerTenant({ id: 'signup-2', accounts: ['4444'] }, place, { restore: false });
      await expect(invalid).rejects.toThrow(AdminError);
      await expect(invalid).rejects.toThrow('tenant "signup-2" is not valid: --account "4444"');

      const steps: string[] = [];
      const removed = await removeTenant('signup-1', place, { cancelOpen: false }, (line) => steps.push(line));
      expect(removed).toMatchObject({ topicArn: registered.topicArn, takenLate: 0, stillOpen: 0 });
      expect(steps).toEqual([`Input topic ${registered.topicArn} deleted: the tenant's requests are no longer taken.`]);
      await expect(registerTenant({ id: 'signup-1', accounts: ['444444444444'] }, place, { restore: false })).rejects.toThrow(
        /was removed at/,
      );
    } finally {
      place.close();
      await service.stop();
    }
  });
});
