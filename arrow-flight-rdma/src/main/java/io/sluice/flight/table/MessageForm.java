package io.sluice.flight.table;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.message.ArrowDictionaryBatch;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.arrow.vector.util.DictionaryUtility;

/**
 * A schema and its dictionaries the way Arrow IPC carries them: the message schema (a
 * dictionary-encoded field with its value type) and one dictionary batch per dictionary the
 * schema uses, in id order. The batches hold references to the provider's vectors' buffers; the
 * caller owns (closes) them.
 */
public record MessageForm(Schema messageSchema, List<ArrowDictionaryBatch> dictionaries) {
  /** The IPC form of {@code schema} (in-memory form: index types) with {@code provider}'s dictionaries. */
  public static MessageForm of(Schema schema, DictionaryProvider provider) {
    Set<Long> ids = new HashSet<>();
    List<Field> fields = new ArrayList<>();
    for (Field f : schema.getFields()) {
      fields.add(DictionaryUtility.toMessageFormat(f, provider, ids));
    }
    List<ArrowDictionaryBatch> dictionaries = new ArrayList<>();
    for (long id : ids.stream().sorted().toList()) {
      FieldVector v = provider.lookup(id).getVector();
      VectorSchemaRoot holder = new VectorSchemaRoot(List.of(v.getField()), List.of(v), v.getValueCount());
      dictionaries.add(new ArrowDictionaryBatch(id, new VectorUnloader(holder).getRecordBatch()));
    }
    return new MessageForm(new Schema(fields, schema.getCustomMetadata()), dictionaries);
  }
}
