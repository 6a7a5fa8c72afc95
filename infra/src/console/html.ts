/** HTML built from templates: every interpolated value is escaped unless it is already Html. */
export class Html {
  constructor(readonly text: string) {}

  toString(): string {
    return this.text;
  }
}

const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function escaped(value: string): string {
  return value.replace(/[&<>"']/g, (character) => ESCAPES[character] ?? character);
}

type Part = Html | string | number | undefined | null | false | readonly Part[];

function render(part: Part): string {
  if (part === undefined || part === null || part === false) return '';
  if (part instanceof Html) return part.text;
  if (Array.isArray(part)) return part.map(render).join('');
  return escaped(String(part));
}

export function html(strings: TemplateStringsArray, ...values: readonly Part[]): Html {
  return new Html(strings.reduce((text, string, index) => text + render(values[index - 1] as Part) + string));
}
