/**
 * Kubernetes name rules (apimachinery `validation`), as used by flag values. Each returns a problem
 * text, or undefined when the value is valid.
 */

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const QUALIFIED_NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

const MAX_LABEL_LENGTH = 63;
const MAX_SUBDOMAIN_LENGTH = 253;

/** A namespace name: DNS-1123 label. */
export function checkDnsLabel(value: string): string | undefined {
  if (value.length > MAX_LABEL_LENGTH) return `must be at most ${MAX_LABEL_LENGTH} characters`;
  if (!DNS_LABEL.test(value)) {
    return 'must consist of lower case alphanumeric characters or "-", and start and end with an alphanumeric character';
  }
  return undefined;
}

/** An object name such as a Lease: DNS-1123 subdomain. */
export function checkDnsSubdomain(value: string): string | undefined {
  if (value.length > MAX_SUBDOMAIN_LENGTH)
    return `must be at most ${MAX_SUBDOMAIN_LENGTH} characters`;
  if (!DNS_SUBDOMAIN.test(value)) {
    return 'must consist of lower case alphanumeric characters, "-" or ".", and start and end with an alphanumeric character';
  }
  return undefined;
}

/**
 * An annotation or label key (§12.3): an optional DNS-subdomain prefix and `/`, then a name of at most 63
 * characters from `[A-Za-z0-9._-]` that starts and ends alphanumeric.
 */
export function checkQualifiedName(value: string): string | undefined {
  const parts = value.split('/');
  if (parts.length > 2) return 'must have at most one "/"';
  const [prefixOrName = '', maybeName] = parts;
  const name = maybeName ?? prefixOrName;
  if (maybeName !== undefined) {
    if (prefixOrName === '') return 'prefix before "/" must not be empty';
    const prefixProblem = checkDnsSubdomain(prefixOrName);
    if (prefixProblem !== undefined) return `prefix ${prefixProblem}`;
  }
  if (name === '') return 'name must not be empty';
  if (name.length > MAX_LABEL_LENGTH) return `name must be at most ${MAX_LABEL_LENGTH} characters`;
  if (!QUALIFIED_NAME_PART.test(name)) {
    return 'name must consist of alphanumeric characters, "-", "_" or ".", and start and end with an alphanumeric character';
  }
  return undefined;
}

/** A label value: empty, or like the name part of a key. */
export function checkLabelValue(value: string): string | undefined {
  if (value.length > MAX_LABEL_LENGTH) return `must be at most ${MAX_LABEL_LENGTH} characters`;
  if (!LABEL_VALUE.test(value)) {
    return 'must be empty or consist of alphanumeric characters, "-", "_" or ".", and start and end with an alphanumeric character';
  }
  return undefined;
}
