package io.continuum.broker.testing.leaks;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Sample test classes that misbehave on purpose run only inside a test, through the engine test kit with
 * {@link #PARAMETER} set; a plain build skips them.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@ExtendWith(OnlyInTestKit.Condition.class)
public @interface OnlyInTestKit {
    /** The configuration parameter the self-tests set. */
    String PARAMETER = "continuum.extension-self-test";

    /** Enables the class only when the parameter is set. */
    final class Condition implements ExecutionCondition {
        @Override
        public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
            return context.getConfigurationParameter(PARAMETER).isPresent()
                    ? ConditionEvaluationResult.enabled("run by a self-test")
                    : ConditionEvaluationResult.disabled("a misbehaving sample, run only by its self-test");
        }
    }
}
