import cliProgress from 'cli-progress';

export interface ProgressBar {
  update(value: number, detail?: string): void;
  setTotal(total: number): void;
}

/**
 * Progress bars on stderr (published, received, late; or one phase's counter). Off, or not a
 * terminal: nothing is drawn and `note` lines are printed plainly.
 */
export class Progress {
  private readonly bars: cliProgress.MultiBar | undefined;

  constructor(enabled: boolean) {
    this.bars =
      enabled && process.stderr.isTTY
        ? new cliProgress.MultiBar(
            {
              format: '{label} |{bar}| {value}/{total} {detail}',
              barsize: 30,
              hideCursor: true,
              clearOnComplete: false,
              fps: 5,
              stream: process.stderr,
            },
            cliProgress.Presets.shades_classic,
          )
        : undefined;
  }

  bar(label: string, total: number): ProgressBar {
    const bar = this.bars?.create(total, 0, { label: label.padEnd(10), detail: '' });
    return {
      update: (value, detail = '') => bar?.update(value, { label: label.padEnd(10), detail }),
      setTotal: (total) => bar?.setTotal(total),
    };
  }

  /** A line above the bars. */
  note(line: string): void {
    if (this.bars) this.bars.log(`${line}\n`);
    else process.stderr.write(`${line}\n`);
  }

  stop(): void {
    this.bars?.stop();
  }
}
