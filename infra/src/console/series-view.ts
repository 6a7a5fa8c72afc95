import { type PastOccurrence, type SeriesPage, type SeriesRecord, upcomingOccurrences } from '@adhoc-scheduler/shared';
import { pastOutcomeText, UPCOMING_SHOWN, zonedIso } from '../admin/series-view.js';
import type { SeriesDetail } from './backend.js';
import { html, type Html } from './html.js';
import { page, type PageContext, tenantChooser } from './views.js';

/** A series listing as asked: by tenant, optionally by label, from a page token. */
export interface SeriesListQuery {
  readonly tenant: string;
  readonly label: string | undefined;
  readonly after: string | undefined;
}

const iso = (epochMs: number) => new Date(epochMs).toISOString();

/** Two cells: an instant in a series' zone, and in UTC. */
function timeCells(epochMs: number, zone: string): Html {
  const datetime = iso(epochMs);
  return html`<td><time datetime="${datetime}">${zonedIso(epochMs, zone)}</time></td><td><time datetime="${datetime}">${datetime}</time></td>`;
}

const seriesLink = (id: string) => html`<a href="/series/${encodeURIComponent(id)}">${id}</a>`;

/** The URL of a series listing, as bookmarked. */
export function seriesListUrl(query: Partial<SeriesListQuery>): string {
  const parameters = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== '') parameters.set(name, value);
  return `/series?${parameters.toString()}`;
}

function seriesRow(record: SeriesRecord, now: number): Html {
  const [next] = upcomingOccurrences(record, now, 1);
  const { spec } = record;
  const datetime = next === undefined ? '' : iso(next.dueAt);
  return html`<tr>
<td>${seriesLink(record.id)}</td>
<td>${record.state}</td>
<td>${spec.expression.text}</td>
<td>${spec.timezone}</td>
<td>${next === undefined ? '-' : html`<time datetime="${datetime}">${zonedIso(next.dueAt, spec.timezone)}</time><br><time datetime="${datetime}">${datetime}</time>`}</td>
<td>${record.clientId ?? '-'}</td>
<td>${(record.labels ?? []).join(', ') || '-'}</td>
</tr>`;
}

export function seriesListView(
  context: PageContext,
  query: SeriesListQuery,
  listed: SeriesPage | undefined,
  problem: Html | undefined,
  now: number,
): string {
  const filters = html`<form method="get" action="/series" class="filters">
${tenantChooser(query.tenant)}
<label>Label <input name="label" value="${query.label ?? ''}" size="16"></label>
<button type="submit">Show</button>
</form>
<p class="note">Active series, by their next occurrence not yet materialised (with a label, by their first). A series leaves this list when it ends; its page stays at /series/ and its id for the retention period.</p>`;
  let listing: Html = html``;
  if (problem !== undefined) listing = problem;
  else if (listed !== undefined && listed.series.length === 0) listing = html`<p role="status">No series match.</p>`;
  else if (listed !== undefined)
    listing = html`<table>
<caption>Series of ${query.tenant}, by next due time</caption>
<thead><tr><th scope="col">Series</th><th scope="col">State</th><th scope="col">Schedule</th><th scope="col">Zone</th><th scope="col">Next (in its zone, and UTC)</th><th scope="col">Client id</th><th scope="col">Labels</th></tr></thead>
<tbody>${listed.series.map((record) => seriesRow(record, now))}</tbody>
</table>
${listed.next === undefined ? '' : html`<p><a href="${seriesListUrl({ ...query, after: listed.next })}" rel="next">Next page</a></p>`}`;
  return page(
    context,
    '/series',
    'Series',
    html`${filters}${listing}<p><a href="/events?tenant=${encodeURIComponent(query.tenant)}">Events of ${query.tenant}</a></p>`,
  );
}

function pastRow(past: PastOccurrence, zone: string): Html {
  return html`<tr>
<th scope="row">${past.occurrence}</th>
${timeCells(past.dueAt, zone)}
<td>${past.event === undefined ? past.eventId : html`<a href="/events/${encodeURIComponent(past.eventId)}">${past.eventId}</a>`}</td>
<td>${pastOutcomeText(past)}</td>
</tr>`;
}

export function seriesDetailView(context: PageContext, detail: SeriesDetail, now: number): string {
  const { record, past } = detail;
  const { spec } = record;
  const field = (name: string, value: Html | string | undefined) =>
    value === undefined || value === '' ? '' : html`<div><dt>${name}</dt><dd>${value}</dd></div>`;
  const upcoming = upcomingOccurrences(record, now, UPCOMING_SHOWN);
  return page(
    context,
    '/series',
    `Series ${record.id}`,
    html`<dl class="fields">
${field('Tenant', html`<a href="${seriesListUrl({ tenant: record.tenant })}">${record.tenant}</a>`)}
${field('State', record.state)}
${field('Schedule', spec.expression.text)}
${field('Zone', spec.timezone)}
${field('Start', zonedIso(spec.start, spec.timezone))}
${field('End', spec.end === undefined ? undefined : zonedIso(spec.end, spec.timezone))}
${field('Count', spec.count === undefined ? undefined : String(spec.count))}
${field('Daylight saving', `gap ${spec.dst.gap}, overlap ${spec.dst.overlap}`)}
${field('Catch-up window', `${record.catchUpMs / 1000} s`)}
${field('Labels', (record.labels ?? []).join(', '))}
${field('Client id', record.clientId)}
${field('User', record.user)}
${field('Target', record.target)}
${field('Failure topic', record.failureTopic)}
${field('Cancelled by', record.cancelledBy)}
${field('Kept until', iso(record.expiresAt * 1000))}
</dl>
<section aria-labelledby="next">
<h2 id="next">Next occurrences</h2>
${
  upcoming.length === 0
    ? html`<p role="status">None: the series has ended.</p>`
    : html`<table>
<caption>Its next occurrences, in its zone and in UTC</caption>
<thead><tr><th scope="col">#</th><th scope="col">Due (in its zone)</th><th scope="col">Due (UTC)</th><th scope="col">Made</th></tr></thead>
<tbody>${upcoming.map(
        ({ occurrence, dueAt, materialised }) =>
          html`<tr><th scope="row">${occurrence}</th>${timeCells(dueAt, spec.timezone)}<td>${materialised ? 'materialised: an event already' : 'not yet'}</td></tr>`,
      )}</tbody>
</table>`
}
</section>
<section aria-labelledby="last">
<h2 id="last">Last occurrences</h2>
${
  past.length === 0
    ? html`<p role="status">None has come due yet.</p>`
    : html`<table>
<caption>Its last occurrences, newest first: the event each became, and how late it was published</caption>
<thead><tr><th scope="col">#</th><th scope="col">Due (in its zone)</th><th scope="col">Due (UTC)</th><th scope="col">Event</th><th scope="col">Outcome</th></tr></thead>
<tbody>${past.map((each) => pastRow(each, spec.timezone))}</tbody>
</table>
<p class="note">Lateness runs from the due time to the answer of the publish to the target. An occurrence not found has no event: expired (the retention period after its end), or never made (skipped by the catch-up window, or refused over the tenant's quota).</p>`
}
</section>`,
  );
}
