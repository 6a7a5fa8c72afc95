import { describeOutcome, type ChaosReport, type EventEvidence } from '../chaos/evidence.js';
import type { StageSummary } from '../stages.js';
import { round, type RunResult } from './results.js';

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
}

function table(headers: readonly string[], rows: readonly (readonly (string | number)[])[]): string {
  const head = headers.map((h) => `<th>${escapeHtml(h)}</th>`).join('');
  const body = rows.map((row) => `<tr>${row.map((cell) => `<td>${escapeHtml(String(cell))}</td>`).join('')}</tr>`).join('\n');
  return `<table><thead><tr>${head}</tr></thead><tbody>\n${body}\n</tbody></table>`;
}

function keyValues(record: object): string {
  return table(
    ['', ''],
    Object.entries(record).map(([key, value]) => [key, typeof value === 'object' ? JSON.stringify(value) : String(value)]),
  );
}

const dollars = (value: number): string => (Number.isFinite(value) ? `$${value.toFixed(4)}` : 'n/a');

function eventsTable(events: readonly EventEvidence[]): string {
  return table(
    ['event', 'outcome', 'part', 'due', 'record', 'faults', 'kills', 'dead-letter queue'],
    events.map((event) => [
      event.eventId,
      describeOutcome(event.outcome),
      event.part,
      event.dueAt,
      event.record === 'none' ? 'none' : JSON.stringify(event.record),
      event.faults.map((fault) => `${fault.id} ${fault.service} ${fault.operation} ${fault.kind} ${fault.msFromDue}`).join('; '),
      event.kills.map((kill) => `${kill.n} at ${kill.msFromDue}`).join('; '),
      event.inDeadLetterQueue ? 'yes' : '',
    ]),
  );
}

/** Kills, faults and the events missing, early or failed, with the times from each one's due time (ms). */
function chaosSections(chaos: ChaosReport): string[] {
  const { faults } = chaos;
  return [
    '<h2>Chaos</h2>',
    keyValues({
      seed: chaos.seed,
      'fault rate asked': chaos.faultRate,
      'faults injected (refused / answer lost)': `${faults.total} (${faults.refused} / ${faults.lost})`,
      'calls of the service (about)': faults.calls,
      'faults per call': faults.share ?? 'n/a',
      'publish requests the run retried': chaos.publishRetries,
      'dead-letter queue at the end': `${chaos.deadLetters.messages} ${JSON.stringify(chaos.deadLetters.byKind)}`,
      'queues at the end (visible / in flight / delayed)': Object.entries(chaos.queuesAtEnd)
        .map(([queue, depth]) => `${queue} ${depth.visible} / ${depth.inFlight} / ${depth.delayed}`)
        .join(', '),
    }),
    '<h3>Kills</h3>',
    table(
      ['kill', 's into the run', 'at the spike', 'ms from the spike', 'emulators gone after (s)', 'up again after (s)'],
      chaos.kills.map((kill) => [
        kill.n,
        kill.secondsIntoRun,
        kill.atSpike ? 'yes' : '',
        kill.msFromSpike ?? '',
        kill.emulatorsExitSeconds,
        kill.downSeconds,
      ]),
    ),
    '<h3>Faults injected</h3>',
    table(
      ['service', 'operation', 'refused', 'answer lost'],
      Object.entries(faults.byService).flatMap(([service, byOperation]) =>
        Object.entries(byOperation).map(([operation, kinds]) => [service, operation, kinds.refused, kinds.lost]),
      ),
    ),
    `<h3>Missing, early and failed events (${chaos.events.length + chaos.eventsNotShown}; times in ms from the due time)</h3>`,
    eventsTable(chaos.events),
    '<h3>Each part of the load: lateness (ms) and duplicates</h3>',
    table(
      ['part', 'events', 'duplicated', 'p50', 'p99', 'max'],
      Object.entries(chaos.byPart).map(([part, l]) => [part, l.events, l.duplicated, l.p50, l.p99, l.max]),
    ),
    '<h3>The latest events</h3>',
    eventsTable(chaos.latest),
  ];
}

/** A self-contained page: the same numbers as the results JSON, with the histograms inline. */
export function renderHtml(
  result: RunResult,
  svgs: { readonly linear?: string | undefined; readonly log?: string | undefined; readonly byTenant?: Readonly<Record<string, string>> },
): string {
  const sections: string[] = [];
  sections.push(`<h1>${escapeHtml(result.title)}</h1>`);
  sections.push(
    `<p>Run <code>${escapeHtml(result.runId)}</code>, ${escapeHtml(result.startedAt)} to ${escapeHtml(result.finishedAt)}; ` +
      `${result.machine.cpus} cores (${escapeHtml(result.machine.cpuModel)}), ${result.machine.memoryGiB} GiB, Node ${escapeHtml(result.machine.node)}; ` +
      `service: ${escapeHtml(result.service.mode)}` +
      (result.source
        ? `, commit <code>${escapeHtml(result.source.commit.slice(0, 12))}</code>${result.source.uncommittedChanges ? ' with uncommitted changes' : ''}`
        : '') +
      '.</p>',
  );
  sections.push(`<p><code>${escapeHtml(result.command)}</code></p>`);
  sections.push('<h2>Targets</h2>');
  sections.push(
    table(
      ['', 'target', 'measured', 'met'],
      result.targets.map((t) => [t.name, t.target, t.actual, t.met ? 'yes' : 'NO']),
    ),
  );
  if (result.chaos) sections.push(...chaosSections(result.chaos));
  if (result.delivery) {
    const { latenessMs, counts } = result.delivery;
    if (latenessMs) {
      sections.push('<h2>Lateness at the consumer (ms)</h2>');
      sections.push(
        table(
          ['events', 'min', 'mean', 'p50', 'p90', 'p99', 'p99.9', 'max'],
          [
            [
              latenessMs.count,
              latenessMs.min,
              latenessMs.mean,
              latenessMs.p50,
              latenessMs.p90,
              latenessMs.p99,
              latenessMs['p99.9'],
              latenessMs.max,
            ],
          ],
        ),
      );
    }
    if (svgs.linear) sections.push(`<figure>${svgs.linear}</figure>`);
    if (svgs.log) sections.push(`<figure>${svgs.log}</figure>`);
    const byTenant = result.delivery.byTenant;
    if (byTenant) {
      sections.push('<h2>Per tenant (lateness in ms)</h2>');
      sections.push(
        table(
          [
            'tenant',
            'events',
            'missing',
            'duplicated',
            'early',
            'min',
            'p50',
            'p90',
            'p99',
            'p99.9',
            'max',
            'received before due p50 / p99',
            'publish start lateness p50 / p99',
          ],
          Object.entries(byTenant).map(([tenant, { counts, latenessMs: l, stagesMs }]) => [
            tenant,
            counts.expected,
            counts.missing,
            counts.duplicated,
            counts.early,
            ...(l ? [l.min, l.p50, l.p90, l.p99, l['p99.9'], l.max] : ['', '', '', '', '', '']),
            stagesMs ? `${stagesMs.receivedBeforeDue.p50} / ${stagesMs.receivedBeforeDue.p99}` : '',
            stagesMs ? `${stagesMs.publishStartLateness.p50} / ${stagesMs.publishStartLateness.p99}` : '',
          ]),
        ),
      );
      for (const svg of Object.values(svgs.byTenant ?? {})) sections.push(`<figure>${svg}</figure>`);
    }
    const stages = result.delivery.stagesMs;
    if (stages) {
      const { mostLate, ...summaries } = stages;
      sections.push('<h2>Where the lateness arose (ms, traced inside the local service)</h2>');
      sections.push(
        "<p>Lateness = publishStartLateness + publishStartToConsumer, which is publishStartToQueue (SNS to the consumer's queue) + queueToConsumer (the long poll and the harness's own event loop). Every time is read from the one machine's clock.</p>",
      );
      sections.push(
        table(
          ['stage', 'events', 'below 0', 'min', 'p50', 'p99', 'max'],
          (Object.entries(summaries) as [string, StageSummary][]).map(([name, s]) => [
            name,
            s.count,
            s.negative,
            s.min,
            s.p50,
            s.p99,
            s.max,
          ]),
        ),
      );
      sections.push('<h3>The most late events, most late first</h3>');
      sections.push(
        table(
          [
            'due',
            'lateness',
            'queued before due',
            'received before due',
            'publish start lateness',
            'publish call',
            'publish start to consumer',
            'to its queue',
            'queue to consumer',
          ],
          mostLate.map((e) => [
            e.dueAt,
            e.latenessMs,
            e.queuedBeforeDueMs ?? '',
            e.receivedBeforeDueMs ?? '',
            e.publishStartLatenessMs ?? '',
            e.publishCallMs ?? '',
            e.publishStartToConsumerMs ?? '',
            e.publishStartToQueueMs ?? '',
            e.queueToConsumerMs ?? '',
          ]),
        ),
      );
    }
    const cpu = result.delivery.cpu;
    if (cpu) {
      sections.push(`<h2>Cores busy during the measurement (of ${cpu.cores}, over ${cpu.seconds} s)</h2>`);
      sections.push(
        keyValues({
          ...cpu.byProcess,
          'everything else on the machine': cpu.othersCores,
          'load average at start': result.machine.loadAverageAtStart,
        }),
      );
    }
    sections.push('<h2>Counts</h2>');
    sections.push(keyValues(counts));
    sections.push('<h2>Publishing and consuming</h2>');
    sections.push(
      keyValues({
        ...result.delivery.publish,
        ...Object.fromEntries(Object.entries(result.delivery.consumer).map(([k, v]) => [`consumer ${k}`, v])),
      }),
    );
  }
  if (Object.keys(result.details).length > 0) {
    sections.push('<h2>Details</h2>');
    sections.push(keyValues(result.details));
  }
  if (result.cost) {
    const cost = result.cost;
    sections.push(
      `<h2>Cost per million events (${escapeHtml(String(result.details.path ?? ''))}, list prices us-east-1 as of ${escapeHtml(cost.pricesAsOf)})</h2>`,
    );
    sections.push(
      table(
        ['item', 'used in the run', 'unit', 'run cost', 'per million events'],
        [
          ...cost.lines.map((line) => [
            line.item,
            Math.round(line.quantity * 1000) / 1000,
            line.unit,
            dollars(line.dollars),
            dollars(line.perMillionEvents),
          ]),
          ['total (the service)', '', '', '', dollars(cost.perMillionEvents)],
          [
            'not included: the client publishing to the input topic, one Publish per event',
            '',
            '',
            '',
            dollars(cost.clientInputPublishPerMillion),
          ],
          [
            'not included: receives that found nothing (idle pollers)',
            cost.idleReceives.requests,
            'requests',
            dollars(cost.idleReceives.dollars),
            '',
          ],
          ['EventBridge Scheduler + SNS publish, for comparison', '', '', '', dollars(cost.eventBridgeSchedulerPerMillion)],
        ],
      ),
    );
    sections.push(`<p>Lambda memory assumed (MB): ${escapeHtml(JSON.stringify(cost.memoryMb))}, arm64.</p>`);
  }
  sections.push('<h2>Parameters and service settings</h2>');
  const registered = result.registeredTenants;
  sections.push(
    keyValues({
      ...result.parameters,
      ...result.service.settings,
      ...(registered === undefined
        ? {}
        : {
            registeredTenants: registered.count,
            registeredTenantsImportSeconds: round(registered.importSeconds, 1),
            registeredTenantsInForceSeconds: round(registered.inForceSeconds, 1),
          }),
    }),
  );
  const style =
    'body{font-family:"DejaVu Sans",sans-serif;max-width:1000px;margin:2em auto;color:#222}' +
    'table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}' +
    'figure{margin:1em 0}code{background:#f4f4f4;padding:1px 4px}';
  return `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(result.title)}</title><style>${style}</style></head>\n<body>\n${sections.join('\n')}\n</body></html>\n`;
}
