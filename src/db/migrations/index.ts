import type { DialectMigration } from './kit.ts';
import { migration as m0001 } from './0001_accounts_keys_ledger.ts';
import { migration as m0002 } from './0002_tasks_jobs_channels.ts';
import { migration as m0003 } from './0003_webhooks.ts';
import { migration as m0004 } from './0004_avatar_assets.ts';
import { migration as m0005 } from './0005_usage.ts';
import { migration as m0006 } from './0006_console.ts';
import { migration as m0007 } from './0007_gateway_assert.ts';
import { migration as m0008 } from './0008_text_holds.ts';
import { migration as m0009 } from './0009_text_floats.ts';
import { migration as m0010 } from './0010_key_policies_balance_alerts.ts';
import { migration as m0011 } from './0011_channel_options.ts';
import { migration as m0012 } from './0012_channel_health.ts';
import { migration as m0013 } from './0013_task_usage.ts';
import { migration as m0014 } from './0014_usage_classes.ts';
import { migration as m0015 } from './0015_key_spend_index.ts';
import { migration as m0016 } from './0016_responses.ts';
import { migration as m0017 } from './0017_redeem_codes.ts';
import { migration as m0018 } from './0018_groups.ts';
import { migration as m0019 } from './0019_calls.ts';
import { migration as m0020 } from './0020_email_verified.ts';
import { migration as m0021 } from './0021_signup_tokens_invites.ts';
import { migration as m0022 } from './0022_oidc.ts';
import { migration as m0023 } from './0023_topups.ts';
import { migration as m0024 } from './0024_call_bodies.ts';
import { migration as m0025 } from './0025_response_channels.ts';

// Every migration in the order it runs. A name is stored in each database it ran on: never rename
// one; a change is a new file with the next number, added at the end.
export const migrations: Record<string, DialectMigration> = {
  '0001_accounts_keys_ledger': m0001,
  '0002_tasks_jobs_channels': m0002,
  '0003_webhooks': m0003,
  '0004_avatar_assets': m0004,
  '0005_usage': m0005,
  '0006_console': m0006,
  '0007_gateway_assert': m0007,
  '0008_text_holds': m0008,
  '0009_text_floats': m0009,
  '0010_key_policies_balance_alerts': m0010,
  '0011_channel_options': m0011,
  '0012_channel_health': m0012,
  '0013_task_usage': m0013,
  '0014_usage_classes': m0014,
  '0015_key_spend_index': m0015,
  '0016_responses': m0016,
  '0017_redeem_codes': m0017,
  '0018_groups': m0018,
  '0019_calls': m0019,
  '0020_email_verified': m0020,
  '0021_signup_tokens_invites': m0021,
  '0022_oidc': m0022,
  '0023_topups': m0023,
  '0024_call_bodies': m0024,
  '0025_response_channels': m0025,
};
