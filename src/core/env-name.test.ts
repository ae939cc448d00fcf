import { describe, expect, it } from 'vitest';
import { envVarName, sanitiseEnvVarName, EnvVarNames } from './env-name.ts';

describe('envVarName (§4.3)', () => {
  it.each([
    { type: 'CONFIGMAP', name: 'my-config', expected: 'STAKATER_MY_CONFIG_CONFIGMAP' },
    { type: 'CONFIGMAP', name: 'my.app.config', expected: 'STAKATER_MY_APP_CONFIG_CONFIGMAP' },
    { type: 'CONFIGMAP', name: 'a--b', expected: 'STAKATER_A_B_CONFIGMAP' },
    { type: 'CONFIGMAP', name: '1st.cfg', expected: 'STAKATER_1ST_CFG_CONFIGMAP' },
    { type: 'SECRET', name: 'db-creds', expected: 'STAKATER_DB_CREDS_SECRET' },
    {
      type: 'SECRETPROVIDERCLASS',
      name: 'vault-spc',
      expected: 'STAKATER_VAULT_SPC_SECRETPROVIDERCLASS',
    },
    { type: 'CONFIGMAP', name: 'my.config', expected: 'STAKATER_MY_CONFIG_CONFIGMAP' },
  ] as const)('$type $name → $expected', ({ type, name, expected }) => {
    expect(envVarName(type, name)).toBe(expected);
  });
});

describe('sanitiseEnvVarName', () => {
  it.each([
    { name: '', expected: '' },
    { name: 'abc', expected: 'ABC' },
    { name: 'ABC09', expected: 'ABC09' },
    { name: '--lead', expected: 'LEAD' },
    { name: 'trail-', expected: 'TRAIL_' },
    { name: 'trail.-_', expected: 'TRAIL_' },
    { name: 'a_b', expected: 'A_B' },
    { name: 'a.-_b', expected: 'A_B' },
    { name: 'x\u00e9y', expected: 'X_Y' },
    { name: 'x\u{1F600}y', expected: 'X_Y' },
    { name: '\u00e9x', expected: 'X' },
    { name: 'a\u0131b', expected: 'A_B' },
  ])('$name → $expected', ({ name, expected }) => {
    expect(sanitiseEnvVarName(name)).toBe(expected);
  });
});

describe('EnvVarNames: envVarName built once per source', () => {
  it('names each source as envVarName does, per type, past its bound', () => {
    const names = new EnvVarNames();
    const sources = Array.from(
      { length: 20_050 },
      (_unused, index) => `app.config-${String(index)}`,
    );
    for (const round of [1, 2]) {
      for (const name of sources) {
        expect(names.of(`configmap/${name}`, 'CONFIGMAP', name), `round ${String(round)}`).toBe(
          envVarName('CONFIGMAP', name),
        );
      }
    }
    expect(names.of('secret/app.config-1', 'SECRET', 'app.config-1')).toBe(
      'STAKATER_APP_CONFIG_1_SECRET',
    );
  });
});
