/** Compliance's own pure forms: an AML rule's fields, as the API shows them and its evidence records them. */
import type { AmlRule } from '../../domain/decisions/aml.ts';
import { presentAmlParameters } from '../../domain/decisions/amlRuleParameters.ts';

/**
 * A rule's own fields, its parameters in their decimal form: one form for the API and the evidence, so a
 * rule as an operator reads it is the rule as it was recorded.
 */
export function amlRuleFields(rule: AmlRule) {
  return {
    id: rule.id,
    name: rule.name,
    type: rule.parameters.type,
    parameters: presentAmlParameters(rule.parameters),
    action: rule.action,
    enabled: rule.enabled,
    version: rule.version,
  };
}
