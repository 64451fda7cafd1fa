package io.github.kinesisshellspout;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The streams the spout process emits on, read from the {@code kinesis.spout} map: what the Java side
 * must declare so that the process's handshake check (declared fields = configured fields) passes. The map
 * was checked against the configuration's schema first ({@link ConfigSchema}): here only the defaults and
 * the one rule between keys that the schema cannot say.
 */
final class SpoutStreams implements Serializable {
    private static final long serialVersionUID = 1L;

    static final List<String> DEFAULT_OUTPUT_FIELDS = List.of("partitionKey", "data", "shardId", "sequenceNumber", "arrivalTimestamp");
    static final String DEFAULT_OUTPUT_STREAM = "default";
    static final String DEFAULT_DEAD_LETTER_STREAM = "deadLetter";
    /** What a dead letter carries after the output fields (contract C3). */
    static final List<String> DEAD_LETTER_EXTRA_FIELDS = List.of("attempts", "lastFailureTime");

    final List<String> outputFields;
    final String outputStream;
    /** Null unless {@code retry.onExhausted} is {@code deadLetter}. */
    final String deadLetterStream;

    private SpoutStreams(List<String> outputFields, String outputStream, String deadLetterStream) {
        this.outputFields = outputFields;
        this.outputStream = outputStream;
        this.deadLetterStream = deadLetterStream;
    }

    /** @param spoutConf a map the schema accepted */
    @SuppressWarnings("unchecked")
    static SpoutStreams from(Map<String, Object> spoutConf) {
        Object fields = spoutConf.get("outputFields");
        List<String> outputFields = fields == null ? DEFAULT_OUTPUT_FIELDS : List.copyOf((List<String>) fields);
        String stream = (String) spoutConf.getOrDefault("outputStream", DEFAULT_OUTPUT_STREAM);
        Map<String, Object> retry = (Map<String, Object>) spoutConf.getOrDefault("retry", Map.of());
        if (!"deadLetter".equals(retry.get("onExhausted"))) {
            return new SpoutStreams(outputFields, stream, null);
        }
        String deadLetters = (String) retry.getOrDefault("deadLetterStream", DEFAULT_DEAD_LETTER_STREAM);
        if (deadLetters.equals(stream)) {
            throw new IllegalArgumentException("bad configuration: kinesis.spout.retry.deadLetterStream = \"" + deadLetters
                + "\": must differ from outputStream");
        }
        return new SpoutStreams(outputFields, stream, deadLetters);
    }

    /** The output fields, then the attempts and the time of the last failure. */
    List<String> deadLetterFields() {
        List<String> fields = new ArrayList<>(outputFields);
        fields.addAll(DEAD_LETTER_EXTRA_FIELDS);
        return fields;
    }
}
