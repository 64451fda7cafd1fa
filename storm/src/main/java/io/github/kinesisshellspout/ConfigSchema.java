package io.github.kinesisshellspout;

import java.io.IOException;
import java.io.InputStream;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The {@code kinesis.spout} map checked against the JSON schema the process validates it with (the build
 * writes {@code kinesis-spout.schema.json} from src/config/schema.ts), so a typo fails {@code storm jar} and
 * not every worker. The process still checks what the schema cannot say (keys that depend on each other,
 * defaults from the topology conf). Only the keywords that schema uses are known; another one is refused
 * when the schema is loaded, so a schema change that this class cannot follow fails its tests, not a user.
 */
final class ConfigSchema {
    static final String RESOURCE = "/io/github/kinesisshellspout/kinesis-spout.schema.json";
    private static final Set<String> KEYWORDS = Set.of("$id", "type", "description", "default", "properties",
        "additionalProperties", "required", "oneOf", "enum", "pattern", "minLength", "maxLength", "minimum",
        "maximum", "exclusiveMinimum", "exclusiveMaximum", "items", "minItems", "uniqueItems");

    private final Map<String, Object> schema;

    ConfigSchema(Map<String, Object> schema) {
        checkKeywords(schema, "#");
        this.schema = schema;
    }

    /** The schema shipped in this jar. */
    static ConfigSchema load() {
        try (InputStream in = ConfigSchema.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(RESOURCE + " is missing from the jar: build it after `npm run build`");
            }
            return new ConfigSchema(asObject(Json.parse(new String(in.readAllBytes(), StandardCharsets.UTF_8))));
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + RESOURCE, e);
        }
    }

    /**
     * What a region looks like: words of letters and a number, joined by dashes. The same
     * shape (and words) as the process's check, src/config/region.ts.
     */
    static final String REGION_SHAPE = "must be an AWS region name: words and a number joined by dashes, "
        + "such as \"us-east-1\", \"eu-central-2\" or \"us-gov-west-1\"";

    /** @throws IllegalArgumentException {@code bad configuration: kinesis.spout.<key> = <value>: <what is allowed>} */
    void validate(Map<String, Object> spoutConf) {
        String problem = check(schema, spoutConf, KinesisShellSpout.CONF_KEY);
        if (problem != null) {
            throw new IllegalArgumentException("bad configuration: " + problem);
        }
    }

    /** The first problem of {@code value} at {@code key}, or null. */
    private String check(Map<String, Object> s, Object value, String key) {
        Object type = s.get("type");
        if (type != null && !hasType(value, (String) type)) {
            return bad(key, value, "must be " + article((String) type));
        }
        // A misspelt key first: `streamNme` is a typo to name, not a missing streamName.
        if (value instanceof Map && Boolean.FALSE.equals(s.get("additionalProperties"))) {
            String problem = unknownKey(s, asObject(value), key);
            if (problem != null) {
                return problem;
            }
        }
        if (s.containsKey("oneOf")) {
            String problem = checkOneOf(s, value, key);
            if (problem != null) {
                return problem;
            }
        }
        if (s.containsKey("enum") && !asList(s.get("enum")).contains(value)) {
            return bad(key, value, "allowed: " + quotedList(asList(s.get("enum"))));
        }
        if (value instanceof String) {
            return checkString(s, (String) value, key);
        }
        if (value instanceof Number) {
            return checkNumber(s, (Number) value, key);
        }
        if (value instanceof List) {
            return checkList(s, (List<?>) value, key);
        }
        if (value instanceof Map) {
            return checkObject(s, asObject(value), key);
        }
        return null;
    }

    private String checkOneOf(Map<String, Object> s, Object value, String key) {
        List<Map<String, Object>> alternatives = asList(s.get("oneOf")).stream().map(ConfigSchema::asObject)
            .collect(Collectors.toList());
        long matching = alternatives.stream().filter(alt -> check(alt, value, key) == null).count();
        if (matching == 1) {
            return null;
        }
        if (alternatives.stream().allMatch(alt -> alt.keySet().equals(Set.of("required")))) {
            List<String> names = alternatives.stream().map(alt -> (String) asList(alt.get("required")).get(0))
                .collect(Collectors.toList());
            String first = key + "." + names.get(0);
            Object shown = value instanceof Map ? asObject(value).get(names.get(0)) : null;
            return bad(first, shown, "exactly one of " + String.join(" or ", names) + " is required");
        }
        List<String> allowed = new ArrayList<>();
        for (Map<String, Object> alt : alternatives) {
            allowed.add(describe(alt));
        }
        return bad(key, value, "allowed: " + String.join(" or ", allowed));
    }

    private static String checkString(Map<String, Object> s, String value, String key) {
        if (s.containsKey("pattern") && key.matches("(.*\\.)?region") && !Pattern.compile((String) s.get("pattern")).matcher(value).find()) {
            return bad(key, value, REGION_SHAPE);
        }
        int length = value.codePointCount(0, value.length());
        if (s.containsKey("minLength") && length < asInt(s.get("minLength"))) {
            return bad(key, value, "must have at least " + s.get("minLength") + " character(s)");
        }
        if (s.containsKey("maxLength") && length > asInt(s.get("maxLength"))) {
            return bad(key, value, "must have at most " + s.get("maxLength") + " characters");
        }
        if (s.containsKey("pattern") && !Pattern.compile((String) s.get("pattern")).matcher(value).find()) {
            return bad(key, value, "must match pattern \"" + s.get("pattern") + "\"");
        }
        return null;
    }

    private static String checkNumber(Map<String, Object> s, Number value, String key) {
        BigDecimal n = decimal(value);
        if (s.containsKey("minimum") && n.compareTo(decimal((Number) s.get("minimum"))) < 0) {
            return bad(key, value, "must be >= " + s.get("minimum"));
        }
        if (s.containsKey("maximum") && n.compareTo(decimal((Number) s.get("maximum"))) > 0) {
            return bad(key, value, "must be <= " + s.get("maximum"));
        }
        if (s.containsKey("exclusiveMinimum") && n.compareTo(decimal((Number) s.get("exclusiveMinimum"))) <= 0) {
            return bad(key, value, "must be > " + s.get("exclusiveMinimum"));
        }
        if (s.containsKey("exclusiveMaximum") && n.compareTo(decimal((Number) s.get("exclusiveMaximum"))) >= 0) {
            return bad(key, value, "must be < " + s.get("exclusiveMaximum"));
        }
        return null;
    }

    private String checkList(Map<String, Object> s, List<?> value, String key) {
        if (s.containsKey("minItems") && value.size() < asInt(s.get("minItems"))) {
            return bad(key, value, "must have at least " + s.get("minItems") + " item(s)");
        }
        if (Boolean.TRUE.equals(s.get("uniqueItems")) && new HashSet<>(value).size() != value.size()) {
            return bad(key, value, "must not repeat an item");
        }
        if (s.containsKey("items")) {
            for (int i = 0; i < value.size(); i++) {
                String problem = check(asObject(s.get("items")), value.get(i), key + "[" + i + "]");
                if (problem != null) {
                    return problem;
                }
            }
        }
        return null;
    }

    /** The first key of {@code value} its schema does not know, with the nearest known one if any is close. */
    private String unknownKey(Map<String, Object> s, Map<String, Object> value, String key) {
        Set<String> properties = s.containsKey("properties") ? asObject(s.get("properties")).keySet() : Set.of();
        for (Map.Entry<String, Object> entry : value.entrySet()) {
            if (properties.contains(entry.getKey())) {
                continue;
            }
            String hint = "";
            String near = nearest(entry.getKey(), properties);
            Set<String> topLevel = schema.containsKey("properties") ? asObject(schema.get("properties")).keySet() : Set.of();
            // In an entry of streams, a key of the top level (outputFields) is misplaced rather than misspelt.
            String nearTop = key.equals(KinesisShellSpout.CONF_KEY) ? null : nearest(entry.getKey(), topLevel);
            if (near != null) {
                hint = "did you mean " + near + "? ";
            } else if (nearTop != null) {
                hint = (nearTop.equals(entry.getKey()) ? "" : "did you mean " + nearTop + "? ")
                    + nearTop + " is a key of kinesis.spout itself (for every stream), not of this entry; ";
            }
            return bad(key + "." + entry.getKey(), entry.getValue(),
                "unknown key; " + hint + "allowed keys: " + String.join(", ", properties));
        }
        return null;
    }

    /**
     * The known name closest to {@code name} by edit distance (a swap of two neighbours counting one), if close
     * enough to be a typo: at most 2 edits, or a quarter of the name's length for long names.
     */
    static String nearest(String name, Iterable<String> known) {
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (String candidate : known) {
            int d = editDistance(name.toLowerCase(java.util.Locale.ROOT), candidate.toLowerCase(java.util.Locale.ROOT));
            if (d < bestDistance) {
                best = candidate;
                bestDistance = d;
            }
        }
        return best != null && bestDistance <= Math.max(2, name.length() / 4) ? best : null;
    }

    /** Optimal string alignment distance: insertions, deletions, substitutions and swaps of neighbours. */
    static int editDistance(String a, String b) {
        int[][] d = new int[a.length() + 1][b.length() + 1];
        for (int i = 0; i <= a.length(); i++) {
            d[i][0] = i;
        }
        for (int j = 0; j <= b.length(); j++) {
            d[0][j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                d[i][j] = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
                if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
                    d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
                }
            }
        }
        return d[a.length()][b.length()];
    }

    private String checkObject(Map<String, Object> s, Map<String, Object> value, String key) {
        Map<String, Object> properties = s.containsKey("properties") ? asObject(s.get("properties")) : Map.of();
        if (s.containsKey("required")) {
            for (Object name : asList(s.get("required"))) {
                if (!value.containsKey(name)) {
                    return bad(key + "." + name, null, "is required");
                }
            }
        }
        for (Map.Entry<String, Object> entry : value.entrySet()) {
            String child = key + "." + entry.getKey();
            if (!properties.containsKey(entry.getKey())) {
                continue; // unknownKey has refused it already when the schema allows no other keys
            }
            String problem = check(asObject(properties.get(entry.getKey())), entry.getValue(), child);
            if (problem != null) {
                return problem;
            }
        }
        return null;
    }

    private static boolean hasType(Object value, String type) {
        switch (type) {
            case "string":
                return value instanceof String;
            case "boolean":
                return value instanceof Boolean;
            case "object":
                return value instanceof Map;
            case "array":
                return value instanceof List;
            case "number":
                return value instanceof Number;
            case "integer":
                return value instanceof Number && isIntegral((Number) value);
            default:
                throw new IllegalStateException("schema type " + type + " is not known to " + ConfigSchema.class.getName());
        }
    }

    private static boolean isIntegral(Number n) {
        if (n instanceof Double || n instanceof Float) {
            double d = n.doubleValue();
            return !Double.isInfinite(d) && d == Math.rint(d);
        }
        return !(n instanceof BigDecimal) || ((BigDecimal) n).stripTrailingZeros().scale() <= 0;
    }

    private static BigDecimal decimal(Number n) {
        if (n instanceof BigDecimal) {
            return (BigDecimal) n;
        }
        if (n instanceof BigInteger) {
            return new BigDecimal((BigInteger) n);
        }
        if (n instanceof Double || n instanceof Float) {
            return BigDecimal.valueOf(n.doubleValue());
        }
        return BigDecimal.valueOf(n.longValue());
    }

    private static String describe(Map<String, Object> alt) {
        if (alt.containsKey("enum")) {
            return quotedList(asList(alt.get("enum")));
        }
        if (alt.containsKey("properties")) {
            return asObject(alt.get("properties")).keySet().stream().map(k -> "{\"" + k + "\": ...}")
                .collect(Collectors.joining(" or "));
        }
        return article(String.valueOf(alt.get("type")));
    }

    private static String article(String type) {
        return type.equals("integer") || type.equals("object") || type.equals("array") ? "an " + type : "a " + type;
    }

    private static String quotedList(List<Object> values) {
        return values.stream().map(ConfigSchema::render).collect(Collectors.joining(", "));
    }

    private static String bad(String key, Object value, String allowed) {
        String shown = key.startsWith(KinesisShellSpout.CONF_KEY + ".zookeeper.auth") && value != null ? "(hidden)"
            : value == null ? "(missing)" : render(value);
        return key + " = " + shown + ": " + allowed;
    }

    private static String render(Object value) {
        if (value instanceof String) {
            return "\"" + ((String) value).replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
        }
        if (value instanceof Map) {
            return asObject(value).entrySet().stream().map(e -> render(e.getKey()) + ":" + render(e.getValue()))
                .collect(Collectors.joining(",", "{", "}"));
        }
        if (value instanceof List) {
            return ((List<?>) value).stream().map(ConfigSchema::render).collect(Collectors.joining(",", "[", "]"));
        }
        return String.valueOf(value);
    }

    private static void checkKeywords(Object node, String where) {
        if (node instanceof List) {
            for (Object item : (List<?>) node) {
                checkKeywords(item, where);
            }
            return;
        }
        if (!(node instanceof Map)) {
            return;
        }
        for (Map.Entry<String, Object> e : asObject(node).entrySet()) {
            if (where.endsWith("/properties")) {
                checkKeywords(e.getValue(), where + "/" + e.getKey());
            } else if (!KEYWORDS.contains(e.getKey())) {
                throw new IllegalStateException("schema keyword " + e.getKey() + " at " + where + " is not known to "
                    + ConfigSchema.class.getName() + ": teach it the keyword");
            } else if (!e.getKey().equals("enum") && !e.getKey().equals("default")) {
                checkKeywords(e.getValue(), where + "/" + e.getKey());
            }
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> asObject(Object node) {
        return (Map<String, Object>) node;
    }

    @SuppressWarnings("unchecked")
    private static List<Object> asList(Object node) {
        return (List<Object>) node;
    }

    private static int asInt(Object n) {
        return ((Number) n).intValue();
    }

    /** Just enough JSON for the schema file: objects, arrays, strings, numbers, booleans, null. */
    static final class Json {
        private final String text;
        private int at;

        private Json(String text) {
            this.text = text;
        }

        static Object parse(String text) {
            Json json = new Json(text);
            Object value = json.value();
            json.space();
            if (json.at != text.length()) {
                throw json.error("trailing characters");
            }
            return value;
        }

        private Object value() {
            space();
            if (at >= text.length()) {
                throw error("unexpected end");
            }
            char c = text.charAt(at);
            if (c == '{') {
                Map<String, Object> object = new LinkedHashMap<>();
                at++;
                if (peek('}')) {
                    return object;
                }
                do {
                    space();
                    String name = string();
                    expect(':');
                    object.put(name, value());
                } while (peek(','));
                expect('}');
                return object;
            }
            if (c == '[') {
                List<Object> array = new ArrayList<>();
                at++;
                if (peek(']')) {
                    return array;
                }
                do {
                    array.add(value());
                } while (peek(','));
                expect(']');
                return array;
            }
            if (c == '"') {
                return string();
            }
            for (String word : List.of("true", "false", "null")) {
                if (text.startsWith(word, at)) {
                    at += word.length();
                    return word.equals("null") ? null : Boolean.valueOf(word);
                }
            }
            int start = at;
            while (at < text.length() && "+-0123456789.eE".indexOf(text.charAt(at)) >= 0) {
                at++;
            }
            if (start == at) {
                throw error("unexpected '" + c + "'");
            }
            BigDecimal n = new BigDecimal(text.substring(start, at));
            return n.scale() <= 0 ? (Number) n.longValueExact() : (Number) n.doubleValue();
        }

        private String string() {
            expect('"');
            StringBuilder out = new StringBuilder();
            while (at < text.length() && text.charAt(at) != '"') {
                char c = text.charAt(at++);
                if (c != '\\') {
                    out.append(c);
                    continue;
                }
                char e = text.charAt(at++);
                switch (e) {
                    case 'n': out.append('\n'); break;
                    case 't': out.append('\t'); break;
                    case 'r': out.append('\r'); break;
                    case 'b': out.append('\b'); break;
                    case 'f': out.append('\f'); break;
                    case 'u': out.append((char) Integer.parseInt(text.substring(at, at + 4), 16)); at += 4; break;
                    default: out.append(e);
                }
            }
            expect('"');
            return out.toString();
        }

        private void space() {
            while (at < text.length() && Character.isWhitespace(text.charAt(at))) {
                at++;
            }
        }

        private boolean peek(char c) {
            space();
            if (at < text.length() && text.charAt(at) == c) {
                at++;
                return true;
            }
            return false;
        }

        private void expect(char c) {
            if (!peek(c)) {
                throw error("expected '" + c + "'");
            }
        }

        private IllegalStateException error(String what) {
            return new IllegalStateException("schema JSON: " + what + " at offset " + at);
        }
    }
}
