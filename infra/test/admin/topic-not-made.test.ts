import { describe, expect, it } from 'vitest';
import { AdminError } from '../../src/admin/errors.js';
import { topicNotMade } from '../../src/admin/tenant-place.js';

/** What tenant add on a stack says when SNS will not make the tenant's input topic. */
describe("a tenant's input topic SNS would not make", () => {
  it('names the account’s topic quota when that is why, and what lifts it', () => {
    const limit = Object.assign(new Error('Topic limit exceeded'), { name: 'TopicLimitExceededException' });
    const said = topicNotMade('Scheduler-tenant-acme', 'acme', limit);
    expect(said).toBeInstanceOf(AdminError);
    expect(said.message).toBe(
      'could not make the input topic Scheduler-tenant-acme of tenant "acme": the account holds as many SNS topics as its quota allows ' +
        '(Topics per account, 100,000 by default): raise it in Service Quotas (Amazon SNS), or put further tenants in a stack in another account. Nothing was registered',
    );
  });

  it('passes on any other answer of SNS', () => {
    const denied = Object.assign(new Error('not authorized to perform: SNS:CreateTopic'), { name: 'AuthorizationErrorException' });
    expect(topicNotMade('Scheduler-tenant-acme', 'acme', denied).message).toBe(
      'could not make the input topic Scheduler-tenant-acme of tenant "acme": not authorized to perform: SNS:CreateTopic',
    );
  });
});
