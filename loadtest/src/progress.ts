import cliProgress from 'cli-progress';

export interface ProgressBar {
  update(value: number, detail?: string): void;
  setTotal(total: number): void;
}

/** Where progress goes: a terminal gets bars, anything else (a pipe, a CI log) a line now and then. */
export interface ProgressStream extends NodeJS.WritableStream {
  readonly isTTY?: boolean;
}

interface Counter {
  label: string;
  value: number;
  total: number;
  detail: string;
}

/** Without a terminal: a line when the counts moved, this often at most. */
const LINE_EVERY_MS = 5_000;
/** ... and one at least this often, so a long wait still shows the run is alive. */
const QUIET_LINE_EVERY_MS = 30_000;

/**
 * Progress on stderr (published, received, late; or one phase's counter): bars on a terminal;
 * otherwise a short line every few seconds with the same counts. Off: nothing but the `note`
 * lines, printed plainly.
 */
export class Progress {
  private readonly bars: cliProgress.MultiBar | undefined;
  /** Without a terminal: the counters the line is made of. */
  private readonly counters: Counter[] = [];
  private readonly timer: NodeJS.Timeout | undefined;
  private readonly startedAt = Date.now();
  private lastLine = '';
  private lastLineAt = 0;

  constructor(
    enabled: boolean,
    private readonly stream: ProgressStream = process.stderr,
    lineEveryMs = LINE_EVERY_MS,
  ) {
    this.bars =
      enabled && stream.isTTY
        ? new cliProgress.MultiBar(
            {
              format: '{label} |{bar}| {value}/{total} {detail}',
              barsize: 30,
              hideCursor: true,
              clearOnComplete: false,
              fps: 5,
              stream,
            },
            cliProgress.Presets.shades_classic,
          )
        : undefined;
    if (enabled && !stream.isTTY) {
      this.timer = setInterval(() => this.printLine(), lineEveryMs);
      this.timer.unref();
    }
  }

  bar(label: string, total: number): ProgressBar {
    const bar = this.bars?.create(total, 0, { label: label.padEnd(10), detail: '' });
    const counter: Counter = { label, value: 0, total, detail: '' };
    if (this.timer) this.counters.push(counter);
    return {
      update: (value, detail = '') => {
        bar?.update(value, { label: label.padEnd(10), detail });
        counter.value = value;
        counter.detail = detail;
      },
      setTotal: (total) => {
        bar?.setTotal(total);
        counter.total = total;
      },
    };
  }

  /** A line above the bars. */
  note(line: string): void {
    if (this.bars) this.bars.log(`${line}\n`);
    else this.stream.write(`${line}\n`);
  }

  stop(): void {
    this.bars?.stop();
    if (this.timer) {
      clearInterval(this.timer);
      this.printLine();
    }
  }

  /** The counters in one line, when they moved since the last one (or the last is long ago). */
  private printLine(): void {
    if (this.counters.length === 0) return;
    const counts = this.counters
      .map(
        ({ label, value, total, detail }) =>
          `${label} ${value.toLocaleString('en-US')}/${total.toLocaleString('en-US')}${detail ? ` (${detail})` : ''}`,
      )
      .join(', ');
    const now = Date.now();
    if (counts === this.lastLine && now - this.lastLineAt < QUIET_LINE_EVERY_MS) return;
    this.lastLine = counts;
    this.lastLineAt = now;
    this.stream.write(`[${Math.round((now - this.startedAt) / 1000)} s] ${counts}\n`);
  }
}
