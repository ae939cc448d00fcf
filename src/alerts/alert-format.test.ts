import { describe, expect, it } from 'vitest';
import { ALERT_SINKS, alertMessage, resolveAlertSink, sinkWithStructure } from './alert-format.ts';
import type { AlertSinkName, RollAlert } from './alert-format.ts';

const ONE: RollAlert = {
  sources: [{ type: 'CONFIGMAP', name: 'app-config' }],
  workload: { kind: 'Deployment', namespace: 'team-a', name: 'api' },
};

const TWO: RollAlert = {
  sources: [
    { type: 'SECRET', name: 'db' },
    { type: 'CONFIGMAP', name: 'app-config' },
  ],
  workload: { kind: 'StatefulSet', namespace: 'team-a', name: 'db' },
};

describe('alertMessage', () => {
  it.each<[string, RollAlert, string | undefined, string]>([
    [
      'one source (Reloader text)',
      ONE,
      undefined,
      'Reloader detected changes in *app-config* of type *CONFIGMAP* in namespace *team-a*. Hence reloaded *api* of type *Deployment* in namespace *team-a*',
    ],
    [
      'several sources in source-key order',
      TWO,
      undefined,
      'Reloader detected changes in *app-config* of type *CONFIGMAP*, *db* of type *SECRET* in namespace *team-a*. Hence reloaded *db* of type *StatefulSet* in namespace *team-a*',
    ],
    [
      'with ALERT_ADDITIONAL_INFO',
      ONE,
      'prod cluster',
      'prod cluster : Reloader detected changes in *app-config* of type *CONFIGMAP* in namespace *team-a*. Hence reloaded *api* of type *Deployment* in namespace *team-a*',
    ],
    [
      'with an empty ALERT_ADDITIONAL_INFO',
      ONE,
      '',
      'Reloader detected changes in *app-config* of type *CONFIGMAP* in namespace *team-a*. Hence reloaded *api* of type *Deployment* in namespace *team-a*',
    ],
  ])('%s', (_case, alert, info, expected) => {
    expect(alertMessage(alert, info)).toBe(expected);
  });
});

describe('resolveAlertSink', () => {
  it.each<[string | undefined, AlertSinkName]>([
    ['slack', 'slack'],
    [' Slack ', 'slack'],
    ['TEAMS', 'teams'],
    ['gchat', 'gchat'],
    ['webhook', 'webhook'],
    ['', 'webhook'],
    [undefined, 'webhook'],
    ['discord', 'webhook'],
  ])('%j → %s', (raw, expected) => {
    expect(resolveAlertSink(raw)).toBe(expected);
  });
});

describe('ALERT_SINKS', () => {
  const message = 'a *b* c';
  it.each<[AlertSinkName, string, string]>([
    [
      'slack',
      'application/json',
      '{"attachments":[{"color":"good","author_name":"Reloader","text":"a *b* c"}]}',
    ],
    ['teams', 'application/json', '{"text":"a *b* c"}'],
    ['gchat', 'application/json', '{"text":"a *b* c"}'],
    ['webhook', 'text/plain', 'a b c'],
  ])('%s posts %s %s', (sink, contentType, body) => {
    expect(ALERT_SINKS[sink].contentType).toBe(contentType);
    expect(ALERT_SINKS[sink].body(message)).toBe(body);
  });

  it.each<[AlertSinkName, number, boolean]>([
    ['slack', 200, true],
    ['slack', 204, true],
    ['slack', 400, false],
    ['teams', 200, true],
    ['teams', 202, false],
    ['gchat', 200, true],
    ['gchat', 204, false],
    ['webhook', 201, true],
    ['webhook', 404, false],
  ])('%s accepts %i: %s', (sink, status, accepted) => {
    expect(ALERT_SINKS[sink].accepts(status)).toBe(accepted);
  });
});

describe('sinkWithStructure (--alert-structured)', () => {
  it.each<[Exclude<AlertSinkName, 'structured'>, boolean, AlertSinkName]>([
    ['webhook', true, 'structured'],
    ['webhook', false, 'webhook'],
    ['slack', true, 'slack'],
    ['teams', true, 'teams'],
    ['gchat', false, 'gchat'],
  ])('%s with structured=%s posts as %s', (sink, structured, expected) => {
    expect(sinkWithStructure(sink, structured)).toBe(expected);
  });
});
