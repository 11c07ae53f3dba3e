//! Deprecation notices a module returns in `deprecations`.

use serde::ser::{Serialize, SerializeMap, Serializer};

/// One deprecation: a message and when the feature goes away.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Deprecation {
    /// What is deprecated.
    pub msg: String,
    /// Version it goes away in.
    pub version: Option<String>,
    /// Date it goes away at (YYYY-MM-DD); when set, `version` is not reported.
    pub date: Option<String>,
    /// Collection the version or date belongs to.
    pub collection_name: Option<String>,
}

impl Serialize for Deprecation {
    /// `{"msg", "date" | "version", "collection_name"}`, as Ansible reports them.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(3))?;
        map.serialize_entry("msg", &self.msg)?;
        match &self.date {
            Some(date) => map.serialize_entry("date", date)?,
            None => map.serialize_entry("version", &self.version)?,
        }
        map.serialize_entry("collection_name", &self.collection_name)?;
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn serialises_version_or_date() {
        let d = Deprecation {
            msg: "old".into(),
            version: Some("2.0.0".into()),
            date: None,
            collection_name: Some("ns.col".into()),
        };
        assert_eq!(
            serde_json::to_value(&d).unwrap(),
            json!({"msg": "old", "version": "2.0.0", "collection_name": "ns.col"})
        );
        let d = Deprecation {
            date: Some("2030-01-01".into()),
            ..d
        };
        assert_eq!(
            serde_json::to_value(&d).unwrap(),
            json!({"msg": "old", "date": "2030-01-01", "collection_name": "ns.col"})
        );
    }
}
