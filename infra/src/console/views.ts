import {
  EVENT_STATE,
  type EventState,
  listingLeavesOutOccurrences,
  OPEN_STATES,
  reachedAt,
  SERIES_OCCURRENCES_NOTE,
  UNINDEXED_QUEUED_EVENTS_NOTE,
} from '@adhoc-scheduler/shared';
import type { DeadLetter, DeadLetterFilter, EventLifecycle, EventPage, Overview, TenantSummary } from './backend.js';
import { barChart } from './charts.js';
import { html, type Html } from './html.js';

/** What every page needs: where the console reads, and the session's token for its forms. */
export interface PageContext {
  readonly description: string;
  readonly token: string;
}

/** The listing's state choices: the open ones (the default), each state, or any. */
export const STATE_CHOICES = ['open', ...Object.values(EVENT_STATE), 'any'] as const;
export type StateChoice = (typeof STATE_CHOICES)[number];

/** The states a choice of the listing's stands for. */
export function statesOfChoice(choice: StateChoice): readonly EventState[] {
  if (choice === 'open') return OPEN_STATES;
  if (choice === 'any') return Object.values(EVENT_STATE);
  return [choice];
}

export interface EventsQuery {
  readonly tenant: string;
  readonly label: string | undefined;
  readonly state: StateChoice;
  readonly from: string | undefined;
  readonly to: string | undefined;
  readonly after: string | undefined;
}

/** What a listing without a label leaves out in the lean setting (see tenantIndexKeyAt): said only there. */
const QUEUED_EVENTS_NOTE = html`<p class="note">${UNINDEXED_QUEUED_EVENTS_NOTE}</p>`;
/** What a listing without a label leaves out in either setting: a series' occurrences, listed with their series. */
const OCCURRENCES_NOTE = html`<p class="note">${SERIES_OCCURRENCES_NOTE}</p>`;

const NAV = [
  { path: '/', name: 'Tenants' },
  { path: '/overview', name: 'Overview' },
  { path: '/events', name: 'Events' },
  { path: '/series', name: 'Series' },
  { path: '/dead-letters', name: 'Dead letters' },
] as const;

const iso = (epochMs: number) => new Date(epochMs).toISOString();
const time = (epochMs: number) => html`<time datetime="${iso(epochMs)}">${iso(epochMs)}</time>`;
export const count = (value: number) => value.toLocaleString('en-US');

export function page(context: PageContext, current: string, title: string, body: Html): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · adhoc-scheduler console</title>
<link rel="stylesheet" href="/console.css">
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header>
<p class="brand">adhoc-scheduler console <span class="where">${context.description}</span></p>
<nav aria-label="Views"><ul>${NAV.map(
    ({ path, name }) => html`<li><a href="${path}"${path === current ? html` aria-current="page"` : ''}>${name}</a></li>`,
  )}</ul></nav>
</header>
<main id="main">
<h1>${title}</h1>
${body}
</main>
</body>
</html>
`.text;
}

/** A form that changes something: a POST carrying the session's token, answered by a confirmation page first. */
export function actionForm(
  context: PageContext,
  action: string,
  fields: Readonly<Record<string, string>>,
  button: string,
  extra?: Html,
): Html {
  return html`<form method="post" action="/actions/${action}" class="action">
<input type="hidden" name="token" value="${context.token}">
${Object.entries(fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
${extra}<button type="submit">${button}</button>
</form>`;
}

export function pauseText(summary: TenantSummary): string {
  const { pause } = summary;
  if (pause.paused === 'unknown') return 'not known';
  if (!pause.paused) return 'no';
  const whose = pause.owner === 'operator' ? 'by its operator ' : pause.owner === 'tenant' ? 'by the tenant ' : '';
  return `${whose}since ${iso(pause.since)}${pause.by ? ` (${pause.by})` : ''}${pause.note ? `: ${pause.note}` : ''}`;
}

export function quotaUse(summary: TenantSummary): string {
  if (summary.openEvents === undefined) return 'not known';
  const percent = summary.maxOpenEvents === 0 ? 100 : (100 * summary.openEvents) / summary.maxOpenEvents;
  return `${count(summary.openEvents)} of ${count(summary.maxOpenEvents)} (${percent.toFixed(percent < 1 ? 2 : 0)} %)`;
}

/**
 * The tenant a view shows, typed: a registry may hold 100,000 tenants, too many to list in a
 * choice; the tenants view finds them by id prefix or account.
 */
export function tenantChooser(chosen: string | undefined): Html {
  return html`<label>Tenant <input name="tenant" value="${chosen ?? ''}" size="16" required></label>`;
}

export function overviewView(
  context: PageContext,
  overview: Overview,
  /** Its latest refusals (refusals-view.ts), shown last. */
  refusals?: Html,
): string {
  const chooser = html`<form method="get" action="/overview" class="filters">${tenantChooser(overview.tenant.id)} <button type="submit">Show</button></form>`;
  const { tenant } = overview;
  const atLeast = overview.complete ? '' : 'at least ';
  return page(
    context,
    '/overview',
    `Overview of ${tenant.id}`,
    html`${chooser}
<dl class="figures">
<div><dt>Open events</dt><dd>${quotaUse(tenant)}</dd></div>
<div><dt>Emitted in the last hour</dt><dd>${count(overview.emittedLastHour)}</dd></div>
<div><dt>Failed in the last hour</dt><dd>${count(overview.failedLastHour)}</dd></div>
<div><dt>Paused</dt><dd>${pauseText(tenant)}</dd></div>
</dl>
<p class="note">Emitted and failed count every event that ended in the last hour (its 60 minutes, this one included); lateness is from the due time to the answer of the publish to the target, as the emitter measures it.</p>
<section aria-labelledby="timeline">
<h2 id="timeline">Due in the next hour</h2>
${overview.complete ? '' : html`<p class="note">More open events than the timeline reads: its counts are lower bounds.</p>`}
${overview.listsQueuedEvents ? '' : QUEUED_EVENTS_NOTE}
${OCCURRENCES_NOTE}
${barChart(
  'timeline-chart',
  `Open events due in the next hour, by five-minute slot: ${atLeast}${count(overview.dueNextHour.reduce((sum, slot) => sum + slot.count, 0))}`,
  overview.dueNextHour.map((slot) => ({ label: `from ${iso(slot.from)}`, tick: iso(slot.from).slice(11, 16), count: slot.count })),
)}
<table>
<caption>Open events by five-minute slot, from now</caption>
<thead><tr><th scope="col">From</th><th scope="col">Events</th></tr></thead>
<tbody>${overview.dueNextHour.map((slot) => html`<tr><th scope="row">${time(slot.from)}</th><td>${count(slot.count)}</td></tr>`)}</tbody>
</table>
</section>
<section aria-labelledby="lateness">
<h2 id="lateness">Lateness in the last hour: from the due time to the publish's answer</h2>
${barChart(
  'lateness-chart',
  `Events emitted in the last hour, by how long after their due time their publish answered: ${count(overview.emittedLastHour)}`,
  overview.lateness.map((bin) => ({ label: bin.label, tick: bin.label, count: bin.count })),
)}
<table>
<caption>Events emitted in the last hour, by how long after their due time their publish answered</caption>
<thead><tr><th scope="col">Late by</th><th scope="col">Events</th></tr></thead>
<tbody>${overview.lateness.map((bin) => html`<tr><th scope="row">${bin.label}</th><td>${count(bin.count)}</td></tr>`)}</tbody>
</table>
</section>
${refusals}`,
  );
}

/** The URL of a listing, as bookmarked. */
export function eventsUrl(query: Partial<EventsQuery>): string {
  const parameters = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== '') parameters.set(name, value);
  return `/events?${parameters.toString()}`;
}

export function eventsView(context: PageContext, query: EventsQuery, events: EventPage | undefined, problem: Html | undefined): string {
  const filters = html`<form method="get" action="/events" class="filters">
${tenantChooser(query.tenant)}
<label>Label <input name="label" value="${query.label ?? ''}" size="16"></label>
<label>State <select name="state">${STATE_CHOICES.map(
    (state) => html`<option value="${state}"${state === query.state ? html` selected` : ''}>${state}</option>`,
  )}</select></label>
<label>Due from <input name="from" value="${query.from ?? ''}" placeholder="2026-11-25T09:00:00Z" size="22"></label>
<label>Due before <input name="to" value="${query.to ?? ''}" placeholder="2026-11-26T09:00:00Z" size="22"></label>
<button type="submit">Show</button>
</form>`;
  const bulk =
    query.label === undefined || query.label === ''
      ? ''
      : actionForm(
          context,
          'cancel-by-label',
          { tenant: query.tenant, label: query.label },
          `Cancel every open event of ${query.tenant} labelled ${query.label}…`,
          html`<label>Due before (optional) <input name="due_before" size="22"></label> `,
        );
  let listing: Html = html``;
  if (problem !== undefined) listing = problem;
  else if (events !== undefined && events.events.length === 0) listing = html`<p role="status">No events match.</p>`;
  else if (events !== undefined)
    listing = html`<table>
<caption>Events of ${query.tenant}, by due time</caption>
<thead><tr><th scope="col">Due</th><th scope="col">Event</th><th scope="col">State</th><th scope="col">Since</th><th scope="col">Labels</th><th scope="col">Client id</th><th scope="col">User</th></tr></thead>
<tbody>${events.events.map((event) => {
      return html`<tr>
<td>${time(event.dueAt)}</td>
<td><a href="/events/${encodeURIComponent(event.id)}">${event.id}</a></td>
<td>${event.state}</td>
<td>${time(reachedAt(event))}</td>
<td>${(event.labels ?? []).join(', ') || '-'}</td>
<td>${event.clientId ?? '-'}</td>
<td>${event.user ?? '-'}</td>
</tr>`;
    })}</tbody>
</table>
${events.next === undefined ? '' : html`<p><a href="${eventsUrl({ ...query, after: events.next })}" rel="next">Next page</a></p>`}`;
  const unlabelled = !query.label && events !== undefined;
  const note = html`${unlabelled && !events.listsQueuedEvents ? QUEUED_EVENTS_NOTE : ''}${
    unlabelled && listingLeavesOutOccurrences(statesOfChoice(query.state)) ? OCCURRENCES_NOTE : ''
  }`;
  const series = html`<p><a href="/series?tenant=${encodeURIComponent(query.tenant)}">Recurring series of ${query.tenant}</a></p>`;
  return page(context, '/events', 'Events', html`${filters}${note}${listing}${series}${bulk}`);
}

export function eventView(context: PageContext, lifecycle: EventLifecycle): string {
  const { event, steps } = lifecycle;
  const field = (name: string, value: Html | string | undefined) =>
    value === undefined || value === '' ? '' : html`<div><dt>${name}</dt><dd>${value}</dd></div>`;
  // A held event may still be cancelled or rescheduled (see changeRefusal).
  const open = OPEN_STATES.includes(event.state);
  return page(
    context,
    '/events',
    `Event ${event.id}`,
    html`<dl class="fields">
${field('Tenant', html`<a href="/events?tenant=${encodeURIComponent(event.tenant)}">${event.tenant}</a>`)}
${field('State', event.state)}
${field('Due', time(event.dueAt))}
${field('Series', event.series && html`<a href="/series/${encodeURIComponent(event.series.id)}">${event.series.id}</a>, occurrence ${event.series.occurrence}`)}
${field('Version', String(event.version))}
${field('Labels', (event.labels ?? []).join(', '))}
${field('Client id', event.clientId)}
${field('User', event.user)}
${field('Target', event.target)}
${field('Failure topic', event.failureTopic)}
${field('Payload', event.payloadKept === 'queue' ? 'kept only in the delay queue' : `kept in the ${event.payloadKept === 'record' ? 'record' : 'table'}`)}
${field('Kept until', Number.isNaN(event.expiresAt) ? 'while held, then for the retention period after its end' : time(event.expiresAt * 1000))}
</dl>
<section aria-labelledby="lifecycle">
<h2 id="lifecycle">Lifecycle</h2>
<ol class="steps">${steps.map((step) => html`<li><strong>${step.step}</strong> ${time(step.at)} by ${step.by}${step.detail ? html`: ${step.detail}` : ''}</li>`)}</ol>
</section>
${
  open
    ? html`<section aria-labelledby="actions">
<h2 id="actions">Change it</h2>
${actionForm(context, 'cancel', { event: event.id }, 'Cancel this event…')}
${actionForm(
  context,
  'reschedule',
  { event: event.id },
  'Reschedule…',
  html`<label>New due time <input name="date" required placeholder="${iso(event.dueAt)}" size="24"></label> `,
)}
</section>`
    : ''
}`,
  );
}

export function deadLettersView(
  context: PageContext,
  filter: DeadLetterFilter,
  letters: readonly DeadLetter[] | undefined,
  problem: Html | undefined,
): string {
  const fields = {
    queue: filter.queue ?? '',
    tenant: filter.tenant ?? '',
    event: filter.eventId ?? '',
    label: filter.label ?? '',
  };
  const filters = html`<form method="get" action="/dead-letters" class="filters">
<label>Queue <select name="queue">${['all', 'ingest', 'public-ingest', 'loading', 'delay', 'changes'].map(
    (queue) => html`<option value="${queue}"${queue === (filter.queue ?? 'all') ? html` selected` : ''}>${queue}</option>`,
  )}</select></label>
<label>Tenant <input name="tenant" value="${fields.tenant}" size="12"></label>
<label>Event id <input name="event" value="${fields.event}" size="24"></label>
<label>Label <input name="label" value="${fields.label}" size="16"></label>
<button type="submit">Show</button>
</form>`;
  let listing: Html = html``;
  if (problem !== undefined) listing = problem;
  else if (letters !== undefined && letters.length === 0) listing = html`<p role="status">No dead letters match.</p>`;
  else if (letters !== undefined)
    listing = html`<table>
<caption>Messages set aside after failing too often</caption>
<thead><tr><th scope="col">Message</th><th scope="col">Source queue</th><th scope="col">Receives</th><th scope="col">First sent</th><th scope="col">Tenant</th><th scope="col">Event</th><th scope="col">Labels</th><th scope="col">Last error</th></tr></thead>
<tbody>${letters.map(
      (
        letter,
      ) => html`<tr><td>${letter.messageId}</td><td>${letter.queue}</td><td>${letter.receiveCount}</td><td>${time(letter.firstSentAt)}</td>
<td>${letter.tenant ?? '-'}</td><td>${letter.eventId ?? '-'}</td><td>${(letter.labels ?? []).join(', ') || '-'}</td><td>${letter.lastError ?? '-'}</td></tr>`,
    )}</tbody>
</table>`;
  return page(
    context,
    '/dead-letters',
    'Dead letters',
    html`${filters}${listing}
<section aria-labelledby="dead-letter-actions">
<h2 id="dead-letter-actions">Act on the dead letters this filter chooses</h2>
${actionForm(context, 'redrive', fields, 'Redrive them…')}
${actionForm(context, 'purge', fields, 'Purge them…')}
</section>`,
  );
}

/** A view or action that cannot be shown as asked: a paragraph the page carries, announced to screen readers. */
export function problemNote(message: string): Html {
  return html`<p class="problem" role="alert">${message}</p>`;
}

export function confirmView(
  context: PageContext,
  action: string,
  question: string,
  fields: Readonly<Record<string, string>>,
  button: string,
  back: string,
): string {
  return page(
    context,
    '',
    question,
    html`<form method="post" action="/actions/${action}" class="confirm">
<input type="hidden" name="token" value="${context.token}">
<input type="hidden" name="confirmed" value="yes">
${Object.entries(fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
<button type="submit" autofocus>${button}</button> <a href="${back}">No, go back</a>
</form>`,
  );
}

export function outcomeView(context: PageContext, title: string, message: string, applied: boolean, back: string): string {
  return page(
    context,
    '',
    title,
    html`<p role="status" class="${applied ? 'done' : 'problem'}">${message}</p>
<p><a href="${back}">Back</a></p>`,
  );
}

export function errorView(context: PageContext, title: string, message: string): string {
  return page(context, '', title, problemNote(message));
}
