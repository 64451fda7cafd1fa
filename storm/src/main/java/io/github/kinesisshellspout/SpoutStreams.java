package io.github.kinesisshellspout;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.HashSet;

/**
 * The streams the spout process emits on, read from the {@code kinesis.spout} map: what the Java side
 * must declare so that the process's handshake check (declared fields = configured fields) passes.
 * Only the keys needed here are checked; the process validates the whole map at start.
 */
final class SpoutStreams implements Serializable {
    private static final long serialVersionUID = 1L;

    /** Every field the script can put in a tuple; {@code subSequence} (a KPL user record's index) is not a default. */
    static final List<String> TUPLE_FIELDS = List.of("partitionKey", "data", "shardId", "sequenceNumber", "arrivalTimestamp", "subSequence");
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

    static SpoutStreams from(Map<String, Object> spoutConf) {
        List<String> fields = outputFields(spoutConf.get("outputFields"));
        String stream = streamName(spoutConf.get("outputStream"), "outputStream", DEFAULT_OUTPUT_STREAM);
        Object retry = spoutConf.get("retry");
        if (retry != null && !(retry instanceof Map)) {
            throw bad("retry", retry, "an object");
        }
        Map<?, ?> retryConf = retry == null ? Map.of() : (Map<?, ?>) retry;
        Object onExhausted = retryConf.get("onExhausted");
        if (onExhausted != null && !onExhausted.equals("skip") && !onExhausted.equals("deadLetter")) {
            throw bad("retry.onExhausted", onExhausted, "\"skip\" or \"deadLetter\"");
        }
        String deadLetters = streamName(retryConf.get("deadLetterStream"), "retry.deadLetterStream", DEFAULT_DEAD_LETTER_STREAM);
        if (!"deadLetter".equals(onExhausted)) {
            return new SpoutStreams(fields, stream, null);
        }
        if (deadLetters.equals(stream)) {
            throw bad("retry.deadLetterStream", deadLetters, "a stream other than outputStream");
        }
        return new SpoutStreams(fields, stream, deadLetters);
    }

    /** The output fields, then the attempts and the time of the last failure. */
    List<String> deadLetterFields() {
        List<String> fields = new ArrayList<>(outputFields);
        fields.addAll(DEAD_LETTER_EXTRA_FIELDS);
        return fields;
    }

    private static List<String> outputFields(Object value) {
        if (value == null) {
            return DEFAULT_OUTPUT_FIELDS;
        }
        String allowed = "a non-empty list of distinct names among " + TUPLE_FIELDS;
        if (!(value instanceof List<?> list) || list.isEmpty() || new HashSet<>(list).size() != list.size()) {
            throw bad("outputFields", value, allowed);
        }
        List<String> fields = new ArrayList<>();
        for (Object field : list) {
            if (!TUPLE_FIELDS.contains(field)) {
                throw bad("outputFields", value, allowed);
            }
            fields.add((String) field);
        }
        return List.copyOf(fields);
    }

    private static String streamName(Object value, String key, String fallback) {
        if (value == null) {
            return fallback;
        }
        if (!(value instanceof String name) || name.isEmpty()) {
            throw bad(key, value, "a non-empty string");
        }
        return name;
    }

    private static IllegalArgumentException bad(String key, Object value, String allowed) {
        return new IllegalArgumentException("bad configuration: kinesis.spout." + key + " = " + Objects.toString(value) + ": must be " + allowed);
    }
}
