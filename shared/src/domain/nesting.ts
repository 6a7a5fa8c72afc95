/** Deepest nesting of arrays and objects in a valid JSON text, counted without recursion. */
export function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i];
    if (inString) {
      if (char === '\\') i += 1;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '{' || char === '[') {
      depth += 1;
      deepest = Math.max(deepest, depth);
    } else if (char === '}' || char === ']') depth -= 1;
  }
  return deepest;
}
