//! temp
pub mod address;
pub mod data;
pub mod error;
pub mod host_list;
pub mod ini;
pub mod literal;
pub mod plugin;
pub mod range;
pub mod shell_split;
pub mod vars;
pub mod vars_files;
pub mod yaml;
pub mod yaml_load;
