// Input rules shared by every write path. Each check records a problem against the field it
// concerns, so a client learns everything wrong with an input at once, not one field per attempt.
import { ORDER_STATUSES, type OrderStatus } from '../db/entities/index.ts';
import { isId, type IdKind } from '../db/ids.ts';
import { ValidationError, type FieldError } from '../errors.ts';
import { EMAIL_MAX_LENGTH, NAME_MAX_LENGTH, TOTAL_MAX } from './limits.ts';
import { isOneOf } from '../guards.ts';
import { isIdnHostname } from 'idn-hostname';

const ID_DESCRIPTIONS: Record<IdKind, string> = {
  user: 'a user id like usr_01jd3x3b8vfb9s1p4t4p6q2k7m',
  order: 'an order id like ord_01jd3x3b8vfb9s1p4t4p6q2k7m',
  apiKey: 'an API key id like key_01jd3x3b8vfb9s1p4t4p6q2k7m',
  event: 'an event id like evt_01jd3x3b8vfb9s1p4t4p6q2k7m',
  webhookEndpoint: 'a webhook endpoint id like wep_01jd3x3b8vfb9s1p4t4p6q2k7m',
};
// An address as RFC 6531 (internationalised mail) writes one, in its plain form: a local part of up to
// 64 characters that is a dot-atom (RFC 5321's atext, and any character beyond ASCII, dots only
// between them; no quoted strings), an @, and a host name of two or more labels that IDNA 2008 takes
// (letters, digits and hyphens inside labels, in any script; at most 63 octets a label once
// encoded). So every address stored is one the OpenAPI document's `idn-email` format accepts.
// Deliverability is the mail system's job.
const ATEXT = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~\\-\\u0080-\\u{10FFFF}]";
const LOCAL_PART = new RegExp(`^${ATEXT}+(?:\\.${ATEXT}+)*$`, 'u');
/** C0 and C1 controls, NUL included. */
const CONTROL_CHARACTER = /\p{Cc}/u;
/**
 * Characters that show nothing: format characters (zero-width spaces and joiners, bidirectional
 * marks, the byte order mark) and the rest of Unicode's default-ignorable ones (the combining
 * grapheme joiner, Hangul fillers, variation selectors).
 */
const INVISIBLE_CHARACTER = /[\p{Cf}\p{Default_Ignorable_Code_Point}]/u;
/** A character that shows: neither a space nor an invisible one. */
const VISIBLE_CHARACTER = /[^\s\p{Z}\p{Cf}\p{Default_Ignorable_Code_Point}]/u;

export class InputCheck {
  readonly #errors: FieldError[] = [];

  fail(field: string, message: string): undefined {
    this.#errors.push({ field, message });
    return undefined;
  }

  /** Throws a ValidationError naming every field that failed. */
  done(): void {
    if (this.#errors.length > 0) throw new ValidationError(this.#errors);
  }

  id(kind: IdKind, field: string, value: string): string | undefined {
    const error = idError(kind, field, value);
    return error ? this.fail(error.field, error.message) : value;
  }

  /**
   * Text as PostgreSQL can store it exactly as sent: well-formed Unicode (a lone surrogate would be
   * stored as U+FFFD) and no control characters (PostgreSQL refuses NUL outright, as a malformed
   * message). Surrounding whitespace is dropped first.
   */
  storable(field: string, value: string): string | undefined {
    const text = value.trim();
    if (!text.isWellFormed()) return this.fail(field, 'must be well-formed Unicode text (it holds a lone surrogate)');
    if (CONTROL_CHARACTER.test(text)) return this.fail(field, 'must not contain control characters such as NUL or line breaks');
    return text;
  }

  /** Text a person typed: storable, and NFC-normalised, so that the same characters typed two ways are one value. */
  text(field: string, value: string): string | undefined {
    return this.storable(field, value)?.normalize('NFC');
  }

  /** A value that must be given: absent is "required", null (a PATCH clearing it) "cannot be null". */
  #present<T>(field: string, value: T | null | undefined): value is T {
    if (value === undefined) this.fail(field, 'is required');
    else if (value === null) this.fail(field, 'cannot be null');
    return value != null;
  }

  name(field: string, value: string | null | undefined): string | undefined {
    if (!this.#present(field, value)) return undefined;
    const name = this.text(field, value);
    if (name === undefined) return undefined;
    const length = [...name].length;
    // Blank too: a name of invisible characters only (zero-width spaces, Hangul fillers), which shows nothing.
    if (length === 0 || !VISIBLE_CHARACTER.test(name)) return this.fail(field, 'must not be blank');
    if (length > NAME_MAX_LENGTH) return this.fail(field, `must be at most ${NAME_MAX_LENGTH} characters (got ${length})`);
    return name;
  }

  email(field: string, value: string | null | undefined): string | undefined {
    if (!this.#present(field, value)) return undefined;
    const email = this.text(field, value);
    if (email === undefined) return undefined;
    // Invisible characters would make two addresses that look alike distinct accounts.
    if (INVISIBLE_CHARACTER.test(email)) return this.fail(field, 'must not contain invisible characters such as zero-width spaces');
    if (email.length > EMAIL_MAX_LENGTH) return this.fail(field, `must be at most ${EMAIL_MAX_LENGTH} characters`);
    if (!isEmailAddress(email)) return this.fail(field, 'must be an email address like ada@example.com');
    return email;
  }

  total(field: string, value: number): number | undefined {
    if (!Number.isInteger(value) || value < 0 || value > TOTAL_MAX) {
      return this.fail(field, `must be a whole number of minor currency units from 0 to ${TOTAL_MAX}`);
    }
    return value;
  }

  /** One of a fixed list of words, narrowed to the list's type. */
  oneOf<T extends string>(field: string, values: readonly T[], value: string): T | undefined {
    if (isOneOf(values, value)) return value;
    return this.fail(field, `must be one of ${values.join(', ')}`);
  }

  status(field: string, value: string | null | undefined): OrderStatus | undefined {
    return value == null ? 'pending' : this.oneOf(field, ORDER_STATUSES, value);
  }

  pageSize(field: string, value: number | null | undefined, bounds: { default: number; max: number }): number | undefined {
    if (value == null) return bounds.default;
    if (!Number.isInteger(value) || value < 1 || value > bounds.max) {
      return this.fail(field, `must be a whole number from 1 to ${bounds.max} (got ${value})`);
    }
    return value;
  }
}

function isEmailAddress(email: string): boolean {
  const at = email.lastIndexOf('@');
  const local = email.slice(0, at);
  const host = email.slice(at + 1);
  if (at < 1 || [...local].length > 64 || !LOCAL_PART.test(local)) return false;
  // Two or more labels, none empty (no root dot at the end), split by ASCII dots alone: IDNA would
  // also split at ideographic and full-width dots, which RFC 6531's grammar keeps inside a label.
  if (!/^[^.]+(?:\.[^.]+)+$/u.test(host) || /[\u3002\uff0e\uff61]/u.test(host)) return false;
  try {
    return isIdnHostname(host);
  } catch {
    // Its way of saying no: an error naming the rule the host name breaks.
    return false;
  }
}

/** What is wrong with `value` as an id of `kind`, if anything. */
export function idError(kind: IdKind, field: string, value: string): FieldError | undefined {
  return isId(kind, value) ? undefined : { field, message: `must be ${ID_DESCRIPTIONS[kind]}` };
}

/** Checks one id on its own, for reads that take nothing else. */
export function requireId(kind: IdKind, field: string, value: string): string {
  const check = new InputCheck();
  const id = check.id(kind, field, value);
  check.done();
  return id!;
}
