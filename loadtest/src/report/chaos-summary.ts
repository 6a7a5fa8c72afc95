import { describeOutcome, type ChaosReport, type EventEvidence } from '../chaos/evidence.js';
import { round } from './results.js';

const seconds = (ms: number): string => `${ms >= 0 ? '+' : ''}${(ms / 1000).toFixed(1)} s`;
/** Events listed on the console; results.json holds them all. */
const CONSOLE_EVENTS = 20;

function eventLine(event: EventEvidence): string {
  const record = event.record;
  const state =
    record === 'none'
      ? 'no record'
      : `record ${record.state} v${record.version} (payload in ${record.payloadKept})` +
        (record.queued === undefined ? '' : `, queued ${seconds(record.queued)}`) +
        (record.emitted === undefined ? '' : `, emitted ${seconds(record.emitted)}`) +
        (record.failed === undefined ? '' : `, failed ${seconds(record.failed)} ${record.reason ?? ''}`);
  const faults = event.faults
    .map((fault) => `${fault.id} ${fault.service} ${fault.operation} ${fault.kind} ${seconds(fault.msFromDue)}`)
    .join(', ');
  const kills = event.kills.map((kill) => `${kill.n} ${seconds(kill.msFromDue)}`).join(', ');
  return (
    `    ${event.eventId} ${describeOutcome(event.outcome)} (${event.part}, due ${event.dueAt}): ${state}; faults: ${faults || 'none'}; kills: ${kills || 'none'}` +
    (event.inDeadLetterQueue ? '; in the dead-letter queue' : '')
  );
}

/** Kills, faults, and every event missing, early or failed, with the times from its due time. */
export function chaosLines(chaos: ChaosReport): string[] {
  const lines = [`  chaos (seed ${chaos.seed}): ${chaos.kills.length} kill -9 and restarts of ${chaos.killsPlanned} planned`];
  for (const kill of chaos.kills) {
    const spike = kill.msFromSpike !== undefined && kill.atSpike ? `, ${kill.msFromSpike} ms from the spike's second` : '';
    lines.push(
      `    kill ${kill.n} at +${kill.secondsIntoRun} s${spike}: emulators gone after ${kill.emulatorsExitSeconds} s, up again after ${kill.downSeconds} s`,
    );
  }
  const faults = chaos.faults;
  const share =
    faults.share === undefined ? '' : `, ${(faults.share * 100).toFixed(2)}% of about ${faults.calls.toLocaleString('en-US')} calls`;
  lines.push(
    `  faults injected (${round(chaos.faultRate * 100, 2)}% asked): ${faults.total} (refused ${faults.refused}, answer lost ${faults.lost})${share}`,
  );
  for (const [service, byOperation] of Object.entries(faults.byService)) {
    lines.push(
      `    ${service.padEnd(9)} ${Object.entries(byOperation)
        .map(([operation, kinds]) => `${operation} ${kinds.refused}/${kinds.lost}`)
        .join(', ')}  (refused/lost)`,
    );
  }
  lines.push(
    `  publish requests the run retried: ${chaos.publishRetries}; dead-letter queue: ${chaos.deadLetters.messages} messages ${JSON.stringify(chaos.deadLetters.byKind)}`,
  );
  const queues = Object.entries(chaos.queuesAtEnd).map(([queue, depth]) => `${queue} ${depth.visible}/${depth.inFlight}/${depth.delayed}`);
  lines.push(`  queues at the end (visible/in flight/delayed): ${queues.join(', ')}`);
  const shown = chaos.events.slice(0, CONSOLE_EVENTS);
  const notShown = chaos.events.length - shown.length + chaos.eventsNotShown;
  lines.push(
    `  missing, early and failed events: ${chaos.events.length + chaos.eventsNotShown}${notShown > 0 ? ` (${notShown} not shown; results.json lists ${chaos.events.length})` : ''}`,
  );
  for (const event of shown) lines.push(eventLine(event));
  const parts = Object.entries(chaos.byPart).map(
    ([part, l]) =>
      `${part} ${l.p50} / ${l.p99} / ${l.max} (${l.events}, ${l.duplicated}: ${l.duplicatedBy.lostAnswer} lost answer, ${l.duplicatedBy.kill} kill, ${l.duplicatedBy.other} other)`,
  );
  lines.push(`  by part of the load: lateness ms p50 / p99 / max (events, duplicated: by cause): ${parts.join('; ')}`);
  lines.push('  the latest events:');
  for (const event of chaos.latest.slice(0, 3)) lines.push(eventLine(event));
  return lines;
}
