/**
 * Where a catalogue file stops being JSON, said as an editor shows it: line and column, with what is
 * wrong there. JSON.parse alone does not say it well enough for a file written by hand: Node 20 gives
 * a character offset ("at position 3559"), and for a stray token (the comma after the last hours of a
 * day, `[["09:00", "13:00"],]`) no place at all, only a few characters around it.
 */
export function jsonSyntaxProblem(text: string, error: SyntaxError): string {
  if (text.trim() === '') return 'the file is empty; a catalogue is one JSON object (see docs/catalogue.md)';
  const found = firstErrorOffset(text);
  if (found === null) return `invalid JSON: ${error.message}`;
  // A file cut short is said at its last character, not on the empty line after it.
  const offset = Math.min(found, text.trimEnd().length);
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  const column = offset - before.lastIndexOf('\n');
  return `invalid JSON at line ${line}, column ${column}: ${reasonAt(text, offset, error)}`;
}

function reasonAt(text: string, offset: number, error: SyntaxError): string {
  if (offset >= text.trimEnd().length) {
    return 'the file ends before the JSON does (a closing bracket, brace or quote is missing)';
  }
  const found = text[offset];
  if ((found === '}' || found === ']') && text.slice(0, offset).trimEnd().endsWith(',')) {
    return `a comma comes just before this "${found}": JSON allows none after the last item; remove it`;
  }
  // V8's words without its place ("in JSON at position 12 (line 1 column 13)", "after JSON at
  // position 4778") or the piece of the file it quotes (`Unexpected token 'y', ..."tive": yes,"...
  // is not valid JSON`).
  return error.message
    .replace(/\s*(?:in JSON )?at position \d+.*$/s, '')
    .replace(/, (?:\.\.\.)?".*is not valid JSON$/s, '');
}

const WHITESPACE = new Set([' ', '\t', '\n', '\r']);
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const ESCAPES = new Set(['"', '\\', '/', 'b', 'f', 'n', 'r', 't']);

/**
 * The offset of the first character at which `text` is not JSON (its length when it ends too soon),
 * or null when this reader finds none (or the nesting is too deep for it): JSON.parse's own words
 * are used then.
 */
function firstErrorOffset(text: string): number | null {
  let i = 0;
  const fail = (): never => {
    throw new JsonStop(i);
  };
  const skipWhitespace = () => {
    while (i < text.length && WHITESPACE.has(text[i]!)) i++;
  };
  const string = () => {
    i++;
    for (;;) {
      const c = text[i];
      if (c === undefined) fail();
      if (c === '"') {
        i++;
        return;
      }
      if (c === '\\') {
        i++;
        if (text[i] === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) fail();
          i += 5;
        } else {
          if (!ESCAPES.has(text[i] ?? '')) fail();
          i++;
        }
      } else {
        if (c! < ' ') fail();
        i++;
      }
    }
  };
  const value = (): void => {
    skipWhitespace();
    const c = text[i];
    if (c === '{') {
      i++;
      skipWhitespace();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        skipWhitespace();
        if (text[i] !== '"') fail();
        string();
        skipWhitespace();
        if (text[i] !== ':') fail();
        i++;
        value();
        skipWhitespace();
        if (text[i] === ',') i++;
        else if (text[i] === '}') {
          i++;
          return;
        } else fail();
      }
    }
    if (c === '[') {
      i++;
      skipWhitespace();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (;;) {
        value();
        skipWhitespace();
        if (text[i] === ',') i++;
        else if (text[i] === ']') {
          i++;
          return;
        } else fail();
      }
    }
    if (c === '"') {
      string();
      return;
    }
    for (const word of ['true', 'false', 'null']) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return;
      }
    }
    NUMBER.lastIndex = i;
    if (NUMBER.test(text)) {
      i = NUMBER.lastIndex;
      return;
    }
    fail();
  };
  try {
    value();
    skipWhitespace();
    if (i < text.length) fail();
    return null;
  } catch (stop) {
    if (stop instanceof JsonStop) return stop.offset;
    return null;
  }
}

class JsonStop {
  readonly offset: number;

  constructor(offset: number) {
    this.offset = offset;
  }
}
