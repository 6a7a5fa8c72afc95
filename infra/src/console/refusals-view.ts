import { REFUSALS_KEPT, type RecentRefusals } from '@adhoc-scheduler/shared';
import { html, type Html } from './html.js';

const iso = (epochMs: number) => new Date(epochMs).toISOString();

/** A tenant's latest refusals, as `scripts/admin refusals` lists them: a section of its overview. */
export function refusalsSection(tenant: string, recent: RecentRefusals): Html {
  const rows = recent.refusals.map(
    (refusal) => html`<tr>
<td><time datetime="${iso(refusal.at)}">${iso(refusal.at)}</time></td>
<td>${refusal.clientId ?? '-'}</td>
<td>${refusal.user ?? '-'}</td>
<td>${refusal.action}</td>
<td>${refusal.reason}</td>
<td>${refusal.message}</td>
</tr>`,
  );
  const notKept =
    recent.notKept === 0
      ? ''
      : html`<p class="note">${recent.refused.toLocaleString('en-US')} refused in all; ${recent.notKept.toLocaleString('en-US')} of them in floods were counted, not kept (at most ${REFUSALS_KEPT.perTenantPerBatch} a tenant in one ingest batch).</p>`;
  return html`<section aria-labelledby="refusals">
<h2 id="refusals">Refused at ingest</h2>
${
  recent.refusals.length === 0
    ? html`<p>No request of ${tenant} refused lately.</p>`
    : html`<table>
<caption>The latest requests of ${tenant} refused at ingest, newest first (up to ${REFUSALS_KEPT.perTenant})</caption>
<thead><tr><th scope="col">Refused</th><th scope="col">Client id</th><th scope="col">User</th><th scope="col">Action</th><th scope="col">Reason</th><th scope="col">Message</th></tr></thead>
<tbody>${rows}</tbody>
</table>`
}
${notKept}
</section>`;
}
